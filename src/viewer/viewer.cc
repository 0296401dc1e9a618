// The viewer system: the export model's messages to the Foxglove WebSocket server after
// PostUpdate, world control as protocol services (src/viewer/README.md).
#include "kestrel/viewer/viewer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "kestrel/export/export.h"
#include "viewer/page.h"
#include "viewer/server.h"

namespace kestrel::viewer {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kEmptySchema = R"({"type": "object", "properties": {}})";
constexpr const char* kResponseSchema =
    R"({"type": "object", "properties": {"ok": {"type": "boolean"}, "message": {"type": "string"}}})";

// The embedded file for an HTTP target ("/" is the page), its type set; empty type: none.
std::string page(const std::string& target, std::string& type) {
  std::string path = target.substr(0, target.find('?'));
  if (path == "/") path = "/index.html";
  const auto& files = detail::page_files();
  if (files.empty() && path == "/index.html") {
    type = "text/plain; charset=utf-8";
    return "This kestrel was built without its page's JavaScript packages (three, uplot, "
           "protobufjs): run scripts/install-deps and build again. Foxglove and Lichtblick can "
           "connect to this address with the Foxglove WebSocket protocol meanwhile.\n";
  }
  for (const auto& f : files) {
    if (path != f.path) continue;
    type = f.type;
    if (type.starts_with("text/")) type += "; charset=utf-8";
    return std::string(reinterpret_cast<const char*>(f.data), f.size);
  }
  return {};
}

class ViewerSystem final : public System, public ISystemConfigure, public ISystemPostUpdate {
 public:
  ViewerSystem(sim::Runner& runner, Options options)
      : runner_(runner), options_(std::move(options)) {}

  void configure(ecs::Entity, const Element&, ecs::Registry& reg, sim::EventBus&) override {
    const std::string world = runner_.options().world_name;
    model_ = std::make_unique<exports::ExportModel>(reg, world);
    for (const auto& ch : model_->channels()) {
      // The scene is latched and sent whenever it changes; stats and clock at 10 Hz, enough
      // for a status line and a plot; the rest at the viewer's rate.
      double hz = options_.max_rate_hz;
      if (ch.status) hz = std::min(hz, exports::kStatusRateHz);
      period_[ch.id] = ch.latched || hz <= 0 ? SteadyClock::duration::zero()
                                             : std::chrono::duration_cast<SteadyClock::duration>(
                                                   std::chrono::duration<double>(1.0 / hz));
      next_[ch.id] = SteadyClock::time_point{};
    }
    detail::ServerConfig c;
    c.ip = options_.ip;
    c.port = options_.port;
    c.max_clients = options_.max_clients;
    c.max_message_bytes = options_.max_message_bytes;
    c.name = "kestrel: world " + world;
    c.channels = model_->channels();
    const std::string prefix = "/world/" + world + "/control/";
    c.services = {
        {1, prefix + "pause", "kestrel.Pause", kEmptySchema, kResponseSchema},
        {2, prefix + "play", "kestrel.Play", kEmptySchema, kResponseSchema},
        {3, prefix + "step", "kestrel.Step",
         R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 1000000000, "description": "steps to run, then pause"}}, "required": ["n"]})",
         kResponseSchema},
        {4, prefix + "reset", "kestrel.Reset", kEmptySchema, kResponseSchema},
        {5, prefix + "rtf", "kestrel.RealTimeFactor",
         R"({"type": "object", "properties": {"rtf": {"type": "number", "minimum": 0, "description": "real-time factor, 0 = as fast as possible"}}, "required": ["rtf"]})",
         kResponseSchema},
    };
    c.call = [this](std::uint32_t id, const std::string& request) { return call(id, request); };
    c.page = [](const std::string& target, std::string& type) { return page(target, type); };
    server_ = std::make_unique<detail::Server>(std::move(c));
    std::printf("kestrel: viewer at http://%s:%u/ (Foxglove WebSocket: ws://%s:%u)\n",
                options_.ip.c_str(), server_->port(), options_.ip.c_str(), server_->port());
    std::fflush(stdout);
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& reg) override {
    for (std::uint32_t ch : server_->take_new_subscriptions()) {
      model_->force(ch);
      next_[ch] = SteadyClock::time_point{};
    }
    const auto now = SteadyClock::now();
    exports::StepContext ctx;
    ctx.sim_time = info.sim_time + info.dt;
    ctx.stats = runner_.stats();
    const auto& counters = server_->counters();
    ctx.dropped = counters.dropped;
    ctx.refused = counters.refused;
    ctx.clients = counters.clients;
    bool sent = false;
    // A channel is asked for at most once per period, sent or not: a channel that is due but
    // unchanged (a sensor between samples, a state whose text is the same) or that nobody
    // subscribes to costs nothing in the steps between (a change waits at most one period).
    model_->step(
        reg, ctx,
        [&](std::uint32_t ch) {
          auto& next = next_[ch];
          if (now < next) return false;
          next = now + period_[ch];
          return server_->subscribed(ch);
        },
        [&](exports::Message&& m) {
          sent = true;
          server_->publish(m);
        });
    if (sent) server_->publish_time(ctx.sim_time);
  }

 private:
  detail::ServiceResult call(std::uint32_t id, const std::string& request) {
    json j = json::parse(request.empty() ? std::string("{}") : request, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return {false, "the request is not a JSON object"};
    switch (id) {
      case 1:
        runner_.set_paused(true);
        return {true, R"({"ok": true, "message": "paused"})"};
      case 2:
        runner_.set_paused(false);
        return {true, R"({"ok": true, "message": "playing"})"};
      case 3: {
        if (!j.contains("n") || !j["n"].is_number_unsigned() || j["n"].get<std::uint64_t>() < 1 ||
            j["n"].get<std::uint64_t>() > 1'000'000'000) {
          return {false, "step needs 'n', a whole number of steps from 1 to 1e9"};
        }
        const std::uint64_t n = j["n"];
        runner_.step_n(n);
        return {true, json{{"ok", true}, {"message", fmt::format("stepping {}", n)}}.dump()};
      }
      case 4:
        runner_.request_reset();
        return {true, R"({"ok": true, "message": "reset"})"};
      case 5: {
        if (!j.contains("rtf") || !j["rtf"].is_number() || !std::isfinite(j["rtf"].get<double>()) ||
            j["rtf"].get<double>() < 0) {
          return {false, "rtf needs 'rtf', a finite number >= 0 (0 = as fast as possible)"};
        }
        const double rtf = j["rtf"];
        runner_.set_real_time_factor(rtf);
        return {true, json{{"ok", true}, {"message", fmt::format("RTF {}", rtf)}}.dump()};
      }
    }
    return {false, fmt::format("no service {}", id)};
  }

  sim::Runner& runner_;
  Options options_;
  std::unique_ptr<exports::ExportModel> model_;
  std::unique_ptr<detail::Server> server_;
  std::unordered_map<std::uint32_t, SteadyClock::duration> period_;
  std::unordered_map<std::uint32_t, SteadyClock::time_point> next_;
};

}  // namespace

std::unique_ptr<System> make_viewer_system(sim::Runner& runner, Options options) {
  return std::make_unique<ViewerSystem>(runner, std::move(options));
}

}  // namespace kestrel::viewer
