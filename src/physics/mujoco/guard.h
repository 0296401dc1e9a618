#pragma once
// MuJoCo 2.2's errors and warnings, made Kestrel errors (private to src/physics/mujoco).
//
// MuJoCo reports a fatal error through mju_error, which must not return: its callers go on as if
// it cannot (mj_stackAlloc would hand out memory past the stack). Without a handler it prints
// "Press Enter to exit", waits on stdin and calls exit(1). The options for a handler that does
// not return are an exception, longjmp, or ending the process:
// - A C++ exception would have to unwind through MuJoCo's C frames. The library is C, built by
//   the distribution with whatever unwind tables it chose; a throw through frames without them
//   is undefined behaviour (std::terminate at best). Not used.
// - longjmp across C frames is defined C. C++ allows it as long as no frame it skips has an
//   automatic object with a non-trivial destructor ([csetjmp.syn]). So `call` below jumps only
//   over MuJoCo's own C engine functions and plain Kestrel functions written for it (no C++
//   objects, only MuJoCo calls), never over C++ code: MuJoCo's XML compiler is C++ and is
//   never called through `call` (mj_loadXML reports its errors in its error buffer; during
//   compilation MuJoCo installs its own thread-local handler, which takes precedence over
//   ours and is itself a setjmp/longjmp around the engine calls the compiler makes). The mjData
//   a jump leaves behind is half-updated (its stack marks are not released): the caller
//   throws it away, never steps it again.
// - Ending the process is what the handler does for an error outside `call` (a path Kestrel
//   does not expect): it prints one line naming the error and exits with status 1. Never a
//   prompt, never a read from stdin.
// On top of that, Kestrel validates what it hands MuJoCo so that known error paths are never
// reached: file names and sizes in the VFS, mesh files (mesh_file.h), the stack size it sets,
// the data size before allocation (mujoco_engine.cc).
//
// Warnings (mju_warning: "could not allocate", "too large") go to a per-thread text that the
// caller reads with take_warnings(); MuJoCo never prints or writes MUJOCO_LOG.TXT.

#include <csetjmp>
#include <string>
#include <type_traits>

#include "kestrel/core/error.h"

namespace kestrel::physics::mujoco {

/// Installs Kestrel's mju_user_error and mju_user_warning (once per process; idempotent).
void install_handlers();

/// The warnings MuJoCo gave on this thread since the last call, "; "-separated (then cleared).
std::string take_warnings();

/// A MuJoCo error raised inside `call`: what mju_error said.
class MujocoError : public Error {
 public:
  using Error::Error;
};

namespace detail {
struct Jump {
  std::jmp_buf buf;
  char message[512];
};
/// The innermost active `call` on this thread (nullptr: none).
Jump*& armed();
[[noreturn]] void raise(const char* message);
}  // namespace detail

/// Calls `f(args...)`, a MuJoCo C function or a plain function calling only MuJoCo C functions
/// (no C++ object with a destructor may live in its frame). An mju_error inside becomes a
/// MujocoError thrown here, after the jump; the data `f` was working on is then unusable.
template <class R, class... P, class... A>
R call(R (*f)(P...), A... args) {
  install_handlers();
  detail::Jump jump;  // trivially destructible: the jump skips no destructor
  detail::Jump* const outer = detail::armed();
  if (setjmp(jump.buf) != 0) {
    detail::armed() = outer;
    detail::raise(jump.message);
  }
  detail::armed() = &jump;
  if constexpr (std::is_void_v<R>) {
    f(args...);
    detail::armed() = outer;
  } else {
    R r = f(args...);
    detail::armed() = outer;
    return r;
  }
}

}  // namespace kestrel::physics::mujoco
