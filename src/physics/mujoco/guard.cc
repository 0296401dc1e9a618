#include "physics/mujoco/guard.h"

#include <mujoco/mujoco.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kestrel::physics::mujoco {
namespace {

thread_local std::string warnings;

void on_warning(const char* msg) {
  // Bounded: a model with many bad parts must not grow it without end.
  if (warnings.size() > 4096) return;
  if (!warnings.empty()) warnings += "; ";
  warnings += msg ? msg : "(no text)";
}

[[noreturn]] void on_error(const char* msg) {
  detail::Jump* j = detail::armed();
  if (j) {
    std::snprintf(j->message, sizeof j->message, "%s", msg ? msg : "(no text)");
    detail::armed() = nullptr;
    std::longjmp(j->buf, 1);
  }
  // Outside any guarded call: a path Kestrel does not expect. One line and a clean exit status,
  // never MuJoCo's "Press Enter" prompt (write(2): nothing here may allocate or lock).
  char line[640];
  const int n = std::snprintf(line, sizeof line,
                              "kestrel: error: MuJoCo: %s (outside a guarded call; please report "
                              "it with the world that caused it)\n",
                              msg ? msg : "(no text)");
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(n));
  std::_Exit(1);
}

}  // namespace

namespace detail {
Jump*& armed() {
  thread_local Jump* j = nullptr;
  return j;
}
void raise(const char* message) { throw MujocoError(std::string("MuJoCo: ") + message); }
}  // namespace detail

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    mju_user_error = on_error;
    mju_user_warning = on_warning;
  });
}

std::string take_warnings() {
  std::string w;
  w.swap(warnings);
  return w;
}

}  // namespace kestrel::physics::mujoco
