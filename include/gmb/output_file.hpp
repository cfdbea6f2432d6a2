#pragma once
// The run's output file, written so that it can always be closed, even on a full disk:
// - written through a file descriptor of its own, whole benchmark by whole benchmark
//   (commit() marks the end of each one);
// - space for closing it is reserved beyond its end after every commit (fallocate, keeping the
//   size), so a disk that fills is noticed while the file can still be closed, not after;
// - a JSON file's context opens with blank room (kNoteRoom bytes of spaces) that a stop's note
//   (gmb_interrupted) overwrites in place: closing a stopped run never needs a second copy of
//   the file, and the file is valid JSON with or without the note.
// After a failed write, close() cuts the file back to its last whole benchmark and closes it
// there; where even that fails, the file is left cut after its last whole benchmark, which
// gmb run and --resume close (scripts/gmbtools/data/partial.py). A path that is not a regular
// file (/dev/stdout, a pipe) is written as a stream: no reserve, no note, nothing cut or
// removed.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace gmb {

/// "12.0 KiB free on its file system" for the folder of `path`, or "" where it cannot be told.
inline std::string free_space_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct statvfs fs {};
  if (statvfs(folder.c_str(), &fs) != 0) return "";
  double bytes = double(fs.f_bavail) * double(fs.f_frsize);
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return std::string(text) + " free on its file system";
}

/// Why a write failed: strerror, with the free space where the disk is full.
inline std::string write_error_of(int error, const std::string& path) {
  std::string why = std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) {
    const std::string free = free_space_of(path);
    if (!free.empty()) why += "; " + free;
  }
  return why;
}

/// Writes `text` as the file `path`, whole or not at all: beside it, then renamed over it (a
/// failed write leaves neither a half-written file nor the copy). Throws std::runtime_error
/// naming the file and why.
inline void write_whole_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int error = fd < 0 ? errno : 0;
  for (std::size_t done = 0; error == 0 && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = n < 0 ? errno : EIO;
    else done += std::size_t(n);
  }
  if (fd >= 0 && ::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write '" + path + "' (" + write_error_of(error, path) + ")");
  }
}

class output_file {
 public:
  static constexpr std::size_t kNoteRoom = 320;  // bytes: a stop's note, with its key
  static constexpr off_t kReserve = 64 << 10;    // bytes kept allocated beyond the end

  /// Opens (creates, empties) `path`; throws std::runtime_error naming it.
  explicit output_file(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw std::runtime_error("cannot write '" + path_ + "' (" + std::strerror(errno) + ")");
    }
    struct stat st {};
    regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
    reserving_ = regular_;
    reserve();
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() {
    if (fd_ >= 0) ::close(fd_);
  }

  const std::string& path() const { return path_; }
  /// Why the file could not be written ("" while it could).
  const std::string& fault() const { return fault_; }

  /// Appends `text`; false once a write has failed (fault() says why).
  bool write(const std::string& text) {
    if (!fault_.empty() || fd_ < 0) return false;
    if (put(end_, text)) {
      end_ += off_t(text.size());
      return true;
    }
    fail(errno);
    return false;
  }

  /// Where the text written so far ends a whole benchmark (or the context): a stop closes
  /// the file here. Renews the reserve; false when the disk could not give it back.
  bool commit() {
    if (!fault_.empty()) return false;
    committed_ = end_;
    return reserve();
  }

  /// The blank room for the note: `offset` bytes into the text written next.
  void note_room_at(off_t offset) {
    if (regular_) note_at_ = end_ + offset;
  }

  /// Closes the file: cut back to the last commit where a write failed, then `closing`, the
  /// note in its room (when there is one), and the reserve let go. Returns "" when the file is
  /// whole, else why not (the file then ends after its last whole benchmark, or is removed
  /// where nothing whole was written).
  std::string close(const std::string& closing, const std::string& note) {
    if (fd_ < 0) return "already closed";
    std::string problem;
    if (!regular_) {  // a stream: what was written stays; the closing unless a write failed
      if (fault_.empty() && end_ > 0 && !put(end_, closing)) {
        problem = "cannot close it (" + write_error_of(errno, path_) + ")";
      }
    } else if (committed_ == 0 && !fault_.empty()) {  // not even the context: nothing to keep
      ::close(fd_);
      fd_ = -1;
      std::remove(path_.c_str());
      return "nothing whole was written: the file is removed";
    } else if (end_ > 0) {
      // The closing and the note go in space the file holds (its reserve, the room), then
      // one truncation drops what a failed write left and lets the reserve go.
      const off_t end = fault_.empty() ? end_ : committed_;
      off_t size = end + off_t(closing.size());
      if (!put(end, closing)) {
        problem = "cannot close it (" + write_error_of(errno, path_) + ")";
        size = end;
      } else if (!note.empty() && note_at_ >= 0 && !put(note_at_, note_text(note))) {
        problem = "cannot add its note (" + write_error_of(errno, path_) + ")";
      }
      if (::ftruncate(fd_, size) != 0 && problem.empty()) {
        problem = "cannot close it (" + write_error_of(errno, path_) + ")";
      }
    }
    if (::close(fd_) != 0 && problem.empty()) {
      problem = "cannot close it (" + write_error_of(errno, path_) + ")";
    }
    fd_ = -1;
    return problem;
  }

  /// The note as it goes in the room: `"gmb_interrupted": "<note>",` padded with spaces to
  /// exactly kNoteRoom bytes (the note cut short where it is longer).
  static std::string note_text(const std::string& note) {
    std::string value = note;
    std::string text;
    for (;;) {  // (a cut inside a UTF-8 character is replaced, never thrown)
      text = "\n    \"gmb_interrupted\": " +
             nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             ",";
      if (text.size() <= kNoteRoom || value.empty()) break;
      value.resize(value.size() > 4 ? value.size() - 4 : 0);
      value += "...";
    }
    text.resize(kNoteRoom, ' ');
    return text;
  }

 private:
  /// `text` at offset `at` (a stream: at its end, where `at` always is).
  bool put(off_t at, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          regular_ ? ::pwrite(fd_, text.data() + done, text.size() - done, at + off_t(done))
                   : ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n == 0) errno = EIO;
        return false;
      }
      done += std::size_t(n);
    }
    return true;
  }

  /// Space beyond the end kept allocated; a file system without fallocate goes without.
  bool reserve() {
    if (!reserving_) return true;
#if defined(__linux__)
    if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, end_, kReserve) == 0) return true;
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) {
      reserving_ = false;
      return true;
    }
    fail(errno);
    return false;
#else
    reserving_ = false;
    return true;
#endif
  }

  void fail(int error) {
    if (fault_.empty()) fault_ = write_error_of(error != 0 ? error : EIO, path_);
  }

  std::string path_;
  int fd_ = -1;
  off_t end_ = 0;        // bytes written
  off_t committed_ = 0;  // the end of the last whole benchmark
  off_t note_at_ = -1;   // where the note's room starts
  bool regular_ = true;    // a regular file; else a stream (/dev/stdout, a pipe)
  bool reserving_ = true;
  std::string fault_;
};

}  // namespace gmb
