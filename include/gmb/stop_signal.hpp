#pragma once
// Stopping a run cleanly. The first SIGINT, SIGTERM or SIGHUP only asks the run to stop: the
// benchmark in progress runs its last repetitions, the rest are skipped, and the output file is
// closed holding every finished benchmark. A second signal ends the process at
// once (the default action), except a copy of the first that arrives within kSameStopSeconds:
// Slurm, systemd and `pkill` signal every process of a job while `gmb` forwards the signal to
// its binary too, so one stop is often delivered twice within milliseconds.
// A stop can also come from inside (a write fault): request_stop().
#include <signal.h>
#include <time.h>

#include <string>

namespace gmb {

inline constexpr double kSameStopSeconds = 1.0;

namespace detail {
inline volatile sig_atomic_t g_stop_signal = 0;  // the first signal's number
inline volatile sig_atomic_t g_stop_inside = 0;  // request_stop()
inline timespec g_first_signal_at{};

inline double seconds_between(const timespec& a, const timespec& b) {
  return double(b.tv_sec - a.tv_sec) + 1e-9 * double(b.tv_nsec - a.tv_nsec);
}

// Async-signal-safe: only sig_atomic_t stores, clock_gettime, signal and raise.
inline void on_stop_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (g_stop_signal == 0) {
    g_first_signal_at = now;
    g_stop_signal = sig;
    return;
  }
  if (sig == g_stop_signal && seconds_between(g_first_signal_at, now) < kSameStopSeconds) return;
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace detail

/// Installs the handlers (SA_RESTART: a CUDA call or a write in progress goes on).
inline void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = detail::on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

/// Puts the default actions back (tests; a process that no longer stops cleanly).
inline void default_stop_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
}

/// Stops the run as a signal would, for a reason of the program's own.
inline void request_stop() {
  detail::g_stop_inside = 1;
}

/// Whether the run should stop now (a signal came, or request_stop()).
inline bool stop_requested() {
  return detail::g_stop_signal != 0 || detail::g_stop_inside != 0;
}

/// The number of the first stop signal, 0 if none came.
inline int stop_signal() {
  return detail::g_stop_signal;
}

/// Forgets every stop (tests).
inline void reset_stop() {
  detail::g_stop_signal = 0;
  detail::g_stop_inside = 0;
}

/// "SIGTERM" for the signals caught here, "signal N" for others.
inline std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(sig);
  }
}

}  // namespace gmb
