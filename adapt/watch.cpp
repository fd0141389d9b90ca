#include "adapt/watch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

namespace lagom::adapt {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int /*signal*/) {
  g_stop.store(true);
}

// SIGINT and SIGTERM stop the loop while it lives; the handlers before it come back with it.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &m_old_int);
    sigaction(SIGTERM, &action, &m_old_term);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals() {
    sigaction(SIGINT, &m_old_int, nullptr);
    sigaction(SIGTERM, &m_old_term, nullptr);
  }

 private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

}  // namespace

void watch_until_stopped(long interval_ms, const std::function<void()>& pass) {
  g_stop.store(false);
  const StopSignals signals;
  while (!g_stop.load()) {
    pass();
    for (long slept = 0; slept < interval_ms && !g_stop.load(); slept += k_sleep_slice_ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(k_sleep_slice_ms, interval_ms - slept)));
    }
  }
}

}  // namespace lagom::adapt
