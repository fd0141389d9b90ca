// A thread started with pthread_create, whose refusal (EAGAIN: a process or memory limit) is a return
// value. std::thread reports it by throwing std::system_error, and under an address-space limit building
// that exception can run out of memory inside libstdc++, which ends in std::terminate (seen with prlimit
// --as at a few hundred MiB: "terminate called recursively"); here nothing is allocated on that path.
#pragma once

#include <functional>
#include <pthread.h>

namespace lagom::kernels {

class NativeThread {
 public:
  NativeThread() = default;
  NativeThread(const NativeThread&) = delete;
  NativeThread& operator=(const NativeThread&) = delete;
  ~NativeThread() { join(); }

  // Runs `*body` on a new thread; `body` must outlive it (until join). 0 when started, else the error
  // number pthread_create returned (nothing started). An exception leaving `body` ends the process, as
  // with std::thread.
  int start(std::function<void()>* body) {
    const int rc = pthread_create(&m_thread, nullptr, &NativeThread::run, body);
    m_started = rc == 0;
    return rc;
  }
  void join() {
    if (m_started) pthread_join(m_thread, nullptr);
    m_started = false;
  }
  [[nodiscard]] bool started() const { return m_started; }

 private:
  static void* run(void* body) {
    (*static_cast<std::function<void()>*>(body))();
    return nullptr;
  }
  pthread_t m_thread{};
  bool m_started = false;
};

}  // namespace lagom::kernels
