// Child processes for a batch's runs: fork, a pipe for each child's result, poll with the
// nearest deadline, SIGKILL past it; SIGINT/SIGTERM through a signalfd.
#include "kestrel/batch/executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>

#include "kestrel/core/interrupt.h"
#include "kestrel/core/log.h"

namespace kestrel::batch {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<std::uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v, v + std::strlen(v), n);
  if (ec != std::errc() || *end != '\0' || !*v) {
    throw Error(fmt::format("{}='{}': expected a non-negative integer", name, v));
  }
  return n;
}

struct Child {
  RunSpec spec;
  int fd = -1;
  Clock::time_point start;
  std::string received;
};

// In the child: never returns.
[[noreturn]] void child_main(const RunSpec& spec, int fd, const ExecuteOptions& o,
                             const RunOne& run_one, const sigset_t& old_mask, pid_t parent) {
  // Its own process group: a terminal's ^C reaches the batch, which stops the children.
  setpgid(0, 0);
  // A batch killed outright (SIGKILL, the OOM killer) takes its runs with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  const auto log = o.log_dir / fmt::format("run-{}.log", spec.run_id);
  const int out =
      o.log_dir.empty() ? -1 : ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out >= 0) {
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    ::close(out);
  }
  RunResult r;
  try {
    r = run_one(spec);
  } catch (const std::exception& e) {
    r.outcome = "failed";
    r.message = e.what();
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  r.run_id = spec.run_id;
  r.seed = spec.seed;
  r.params = params_json(spec);
  const std::string text = r.to_json();
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::write(fd, text.data() + sent, text.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::fflush(nullptr);
  _exit(sent == text.size() ? 0 : 3);
}

RunResult unfinished(const Child& c, const char* outcome, std::string message) {
  RunResult r;
  r.run_id = c.spec.run_id;
  r.seed = c.spec.seed;
  r.params = params_json(c.spec);
  r.outcome = outcome;
  r.message = std::move(message);
  return r;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  s.source = "--shard";
  auto num = [&](std::string_view part, std::uint64_t& v) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    return !part.empty() && ec == std::errc() && end == part.data() + part.size();
  };
  if (slash == std::string::npos || !num(std::string_view(text).substr(0, slash), s.index) ||
      !num(std::string_view(text).substr(slash + 1), s.count) || s.count == 0 ||
      s.index >= s.count) {
    throw Error(fmt::format("--shard: expected I/N with 0 <= I < N (e.g. 0/4), found '{}'", text));
  }
  return s;
}

std::optional<Shard> shard_from_environment() {
  if (const auto rank = env_number("OMPI_COMM_WORLD_RANK")) {
    const auto size = env_number("OMPI_COMM_WORLD_SIZE");
    if (!size || *size == 0 || *rank >= *size) {
      throw Error(
          "OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is missing or not above it");
    }
    return Shard{*rank, *size, "OpenMPI"};
  }
  if (const auto id = env_number("SLURM_ARRAY_TASK_ID")) {
    const auto count = env_number("SLURM_ARRAY_TASK_COUNT");
    const std::uint64_t min = env_number("SLURM_ARRAY_TASK_MIN").value_or(0);
    if (!count || *count == 0 || *id < min || *id - min >= *count) {
      throw Error(
          fmt::format("SLURM_ARRAY_TASK_ID={} does not lie in SLURM_ARRAY_TASK_MIN={} + [0, "
                      "SLURM_ARRAY_TASK_COUNT={}): submit the batch as sbatch --array=0-(N-1)",
                      *id, min, count ? std::to_string(*count) : "unset"));
    }
    return Shard{*id - min, *count, "Slurm"};
  }
  return std::nullopt;
}

void execute(const std::vector<RunSpec>& runs, const ExecuteOptions& o, const RunOne& run_one,
             const OnResult& on_result) {
  KESTREL_DEMAND(o.jobs >= 1);
  sigset_t stop, old_mask;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop, &old_mask);
  const int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
  if (sfd < 0) throw Error(std::string("signalfd: ") + std::strerror(errno));

  std::deque<const RunSpec*> pending;
  for (const auto& r : runs) pending.push_back(&r);
  std::map<pid_t, Child> active;
  const auto t0 = Clock::now();
  const pid_t parent = getpid();
  std::size_t finished = 0;
  // Capped at 1e9 s (31 years: no limit in practice) so that start + timeout cannot overflow
  // steady_clock's integer nanoseconds.
  const auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(o.timeout_s, 1e9)));

  auto reap = [&](pid_t pid, RunResult r, bool killed) {
    Child& c = active.at(pid);
    int status = 0;
    if (killed) ::kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(c.fd);
    const double wall = std::chrono::duration<double>(Clock::now() - c.start).count();
    if (!killed) {
      const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      // Where the run's output went: its log, or (the plan check) this process's terminal.
      const std::string output =
          o.log_dir.empty()
              ? std::string("its output is above")
              : "see " + (o.log_dir / fmt::format("run-{}.log", c.spec.run_id)).string();
      const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      if (clean && !c.received.empty()) {
        r = RunResult::from_json(c.received);
      } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
        // Stopped from outside (Slurm's scancel or time limit signals every process of the
        // job): an interruption, not a crash: no row, so that a resume runs it again.
        const std::string during = fmt::format("run {}", c.spec.run_id);
        active.erase(pid);
        throw Interrupted(sig, during);
      } else if (sig != 0) {
        r = unfinished(c, "crashed",
                       fmt::format("killed by signal {} ({}); {}", sig, strsignal(sig), output));
      } else {
        r = unfinished(c, "crashed",
                       fmt::format("exited with code {} without a result; {}",
                                   WIFEXITED(status) ? WEXITSTATUS(status) : -1, output));
      }
    }
    r.wall_time_s = wall;
    active.erase(pid);
    ++finished;
    on_result(r);
  };
  auto kill_all = [&] {
    for (auto& [pid, c] : active) {
      ::kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      ::close(c.fd);
    }
    active.clear();
  };

  try {
    while (!pending.empty() || !active.empty()) {
      while (!pending.empty() && active.size() < o.jobs) {
        const RunSpec& spec = *pending.front();
        pending.pop_front();
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
        if (pid == 0) {
          ::close(fds[0]);
          child_main(spec, fds[1], o, run_one, old_mask, parent);
        }
        ::close(fds[1]);
        active.emplace(pid, Child{spec, fds[0], Clock::now(), {}});
      }
      // Wait for a result, a signal, the nearest deadline or the next progress refresh.
      std::vector<pollfd> polls{{sfd, POLLIN, 0}};
      std::vector<pid_t> pids;
      auto nearest = Clock::time_point::max();
      for (auto& [pid, c] : active) {
        polls.push_back({c.fd, POLLIN, 0});
        pids.push_back(pid);
        nearest = std::min(nearest, c.start + timeout);
      }
      const auto now = Clock::now();
      long wait_ms =
          nearest <= now
              ? 0
              : std::chrono::duration_cast<std::chrono::milliseconds>(nearest - now).count() + 1;
      if (o.progress) wait_ms = std::min(wait_ms, 250L);
      if (::poll(polls.data(), polls.size(), static_cast<int>(std::min(wait_ms, 1L << 30))) < 0 &&
          errno != EINTR) {
        throw Error(std::string("poll: ") + std::strerror(errno));
      }
      if (polls[0].revents & POLLIN) {
        signalfd_siginfo si{};
        const ssize_t n = ::read(sfd, &si, sizeof si);
        (void)n;
        kill_all();
        throw Interrupted(static_cast<int>(si.ssi_signo), "the batch");
      }
      for (std::size_t i = 1; i < polls.size(); ++i) {
        if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Child& c = active.at(pids[i - 1]);
        char buf[4096];
        const ssize_t n = ::read(c.fd, buf, sizeof buf);
        if (n > 0) {
          c.received.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          reap(pids[i - 1], {}, false);
        }
      }
      const auto later = Clock::now();
      std::vector<pid_t> late;
      for (auto& [pid, c] : active) {
        if (later - c.start >= timeout) late.push_back(pid);
      }
      for (pid_t pid : late) {
        Child& c = active.at(pid);
        reap(pid,
             unfinished(c, "timed_out",
                        fmt::format("still running after the wall-clock limit of {} s; killed",
                                    o.timeout_s)),
             true);
      }
      if (o.progress) {
        const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
        const std::size_t total = runs.size();
        std::string eta = "--";
        if (finished > 0) {
          const double left =
              elapsed / static_cast<double>(finished) * static_cast<double>(total - finished);
          eta = fmt::format("{}:{:02}", static_cast<long>(left) / 60, static_cast<long>(left) % 60);
        }
        const int width = 30;
        const int filled = static_cast<int>(width * finished / std::max<std::size_t>(total, 1));
        log::status(fmt::format("[{}{}] {}/{} runs, {} running, ETA {}", std::string(filled, '#'),
                                std::string(width - filled, '.'), finished, total, active.size(),
                                eta));
      }
    }
  } catch (...) {
    kill_all();
    if (o.progress) log::status("");
    ::close(sfd);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    throw;
  }
  if (o.progress) log::status("");
  ::close(sfd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
}

}  // namespace kestrel::batch
