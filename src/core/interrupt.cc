#include "kestrel/core/interrupt.h"

#include <string.h>

namespace kestrel {
namespace {
std::atomic<int> g_signal{0};
}

Interrupted::Interrupted(int signal, const std::string& during)
    : Error("interrupted by " + std::string(sigabbrev_np(signal) ? "SIG" : "signal ") +
            (sigabbrev_np(signal) ? sigabbrev_np(signal) : std::to_string(signal)) + " while " +
            during),
      signal_(signal) {}

void request_interrupt(int signal) { g_signal.store(signal); }
int interrupt_signal() { return g_signal.load(); }

void throw_if_interrupted(const std::string& during) {
  if (const int s = g_signal.load(); s != 0) throw Interrupted(s, during);
}

}  // namespace kestrel
