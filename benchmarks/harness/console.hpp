#pragma once
// The binary's own lines on stderr: a progress line (benchmark n of N, elapsed, estimate left)
// redrawn in place when asked for (`--gmb_progress`, which `gmb run` passes on a terminal), and
// one-line messages that clear it first, so the two never mix.
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace gmb {

class console {
 public:
  /// `label` prefixes the progress line ("default 1/3"); `total` benchmarks will run.
  void enable_progress(std::string label, int total) {
    label_ = std::move(label);
    total_ = total;
    progress_ = true;
    start_ = std::chrono::steady_clock::now();
  }

  /// A benchmark is being run (Google Benchmark calls it once per repetition and while sizing
  /// iterations: only a new name counts).
  void started(const std::string& name) {
    if (name == current_) return;
    current_ = name;
    ++done_;
    draw();
  }

  /// One line on stderr, never mixed into the progress line.
  void message(const std::string& line) {
    clear();
    std::fprintf(stderr, "%s\n", line.c_str());
    draw();
  }

  /// Leaves the terminal as it found it.
  void finish() {
    clear();
    progress_ = false;
  }

 private:
  static std::string clock_text(double seconds) {
    const long s = static_cast<long>(seconds + 0.5);
    char text[32];
    std::snprintf(text, sizeof(text), "%ld:%02ld", s / 60, s % 60);
    return text;
  }

  void clear() {
    if (progress_ && drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }

  void draw() {
    if (!progress_ || done_ == 0) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // Benchmarks before this one are finished: estimate from their mean time.
    const int finished = done_ - 1;
    const std::string left =
        finished > 0 ? "~" + clock_text(elapsed / finished * (total_ - finished)) + " left"
                     : "estimating";
    std::string line = "[" + label_ + "] " + std::to_string(done_) + "/" +
                       std::to_string(total_) + " " + clock_text(elapsed) + " elapsed, " + left +
                       "  " + current_;
    winsize ws{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
        line.size() >= ws.ws_col) {
      line.resize(ws.ws_col - 1);  // a wrapped line could not be redrawn in place
    }
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

  bool progress_ = false;
  bool drawn_ = false;
  std::string label_;
  int total_ = 0;
  int done_ = 0;
  std::string current_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gmb
