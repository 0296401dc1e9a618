// The recorder system: the export model's messages into an MCAP file after PostUpdate
// (src/record/README.md). Another reader of the export model, like the viewer.
#include "kestrel/record/recorder.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "kestrel/components/model.h"
#include "kestrel/core/error.h"
#include "kestrel/export/export.h"
#include "kestrel/record/replay.h"
#include "kestrel/sim/events.h"
#include "record/state.h"

namespace kestrel::record {
namespace {

class Recorder final : public System, public ISystemConfigure, public ISystemPostUpdate {
 public:
  Recorder(sim::Runner& runner, RecordOptions options)
      : runner_(runner),
        options_(std::move(options)),
        // Chunks of under 0.25 s, 3 of them in the writer's hands at most: a kill loses those
        // and the open one, < 1 s.
        writer_(options_.path, McapOptions{options_.compression, std::chrono::milliseconds(250),
                                           4 << 20, 3, "the recording (--record)", "kestrel"}) {}

  ~Recorder() override {
    try {
      close();
    } catch (const Error&) {  // the run's end already reported it (or the run failed first)
    }
  }

  void configure(ecs::Entity, const Element&, ecs::Registry& reg, sim::EventBus& events) override {
    // What the export model is asked when it is asked (made once: last_ is the step's time).
    wanted_ = [this](std::uint32_t ch) { return due(ch, last_); };
    sink_ = [this](exports::Message&& m) {
      if (period_[m.channel] > Duration{0}) next_[m.channel] = last_ + period_[m.channel];
      writer_.write(mcap_[m.channel], static_cast<std::uint64_t>(m.stamp.count()), m.data);
    };
    // The JSON channels' numbers are formatted on the writer's thread (finish_json).
    model_ = std::make_unique<exports::ExportModel>(reg, runner_.options().world_name, true);
    const auto& channels = model_->channels();
    const auto* stats = model_->find("/world/" + runner_.options().world_name + "/stats");
    KESTREL_DEMAND(stats != nullptr);
    stats_ = stats->id;
    std::vector<bool> matched(options_.topics.size(), false);
    std::map<std::tuple<std::string, std::string, std::string>, std::uint16_t> schemas;
    mcap_.assign(channels.size() + 1, 0);
    latched_.assign(channels.size() + 1, false);
    next_.assign(channels.size() + 1, Duration{0});
    period_.assign(channels.size() + 1, Duration{0});
    if (options_.rate_hz && *options_.rate_hz > 0) {
      state_period_ = from_seconds(1.0 / *options_.rate_hz);
    }
    for (const auto& ch : channels) {
      bool take = options_.topics.empty();
      for (std::size_t i = 0; i < options_.topics.size(); ++i) {
        if (::fnmatch(options_.topics[i].c_str(), ch.topic.c_str(), 0) == 0) {
          take = matched[i] = true;
        }
      }
      if (!take) continue;
      auto key = std::make_tuple(ch.schema_name, ch.schema_encoding, ch.schema);
      auto it = schemas.find(key);
      if (it == schemas.end()) {
        it = schemas.emplace(key, writer_.add_schema(ch.schema_name, ch.schema_encoding, ch.schema))
                 .first;
      }
      mcap_[ch.id] = writer_.add_channel(it->second, ch.topic, ch.encoding);
      if (ch.raw_numbers) writer_.set_finisher(mcap_[ch.id], exports::finish_json);
      if (ch.latched) latched_[ch.id] = true;
      period_[ch.id] = period_of(ch);
      if (ch.latched || (ch.samples && period_[ch.id] == Duration{0})) {
        // sent when news() says so (the scene changed; a new reading)
      } else if (period_[ch.id] > Duration{0}) {
        periodic_.push_back(ch.id);
      } else {
        every_step_ = true;  // sent at each change, which only the export model's step sees
      }
      topics_.emplace_back(ch.id, ch.topic);
    }
    // Kestrel's state channel (for replay), after the export model's.
    bool state = options_.topics.empty();
    for (std::size_t i = 0; i < options_.topics.size(); ++i) {
      if (::fnmatch(options_.topics[i].c_str(), kStateTopic, 0) == 0) state = matched[i] = true;
    }
    if (state) add_state_channel(reg);
    for (std::size_t i = 0; i < options_.topics.size(); ++i) {
      if (matched[i]) continue;
      std::string list;
      for (const auto& ch : channels) list += (list.empty() ? "" : ", ") + ch.topic;
      list += std::string(", ") + kStateTopic;
      throw Error("--record-topics",
                  fmt::format("'{}' matches no channel of the world; its channels are: {}",
                              options_.topics[i], list));
    }
    // The run's end (a limit, SIGINT, SIGTERM): the summary is written and every write checked;
    // a failure fails the run.
    ended_ = events.subscribe<sim::RunEnded>([this](const sim::RunEnded&) { close(); });
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& reg) override {
    // Paused steps show the same state again: nothing to record (changes made while paused are
    // kept pending by the export model and recorded at the next step that runs).
    if (info.paused) return;
    exports::StepContext ctx;
    ctx.sim_time = info.sim_time + info.dt;
    // The runner's statistics (under its lock) only for a stats message.
    if (due(stats_, ctx.sim_time)) ctx.stats = runner_.stats();
    const auto now = static_cast<std::uint64_t>(ctx.sim_time.count());
    if (ctx.sim_time < last_) {  // a reset: its chunks start again at 0
      writer_.flush();
      std::fill(next_.begin(), next_.end(), Duration{0});
      state_next_ = Duration{0};
    }
    const bool reset = ctx.sim_time < last_;
    last_ = ctx.sim_time;
    writer_.advance(now);
    // The export model is asked only at steps where a channel can be due: one of the world's
    // state at its period (soonest_), a sensor's new reading or the scene (news) — or every step
    // when a channel of its state is recorded at every change (--record-rate 0). Most steps
    // have no message (docs/performance.md, "Recording").
    if (every_step_ || reset || ctx.sim_time >= soonest_ || model_->news(reg, wanted_)) {
      model_->step(reg, ctx, wanted_, sink_);
      soonest_ = Duration::max();
      for (std::uint32_t ch : periodic_) soonest_ = std::min(soonest_, next_[ch]);
    }
    if (state_channel_ != 0 && !state_ended_ && ctx.sim_time >= state_next_) {
      if (reg.count<components::Model>() != state_models_ ||
          reg.count<components::Link>() != state_links_) {
        // A model spawned or removed: the layout in the channel's metadata no longer holds.
        state_ended_ = true;
        spdlog::warn(
            "recording: the world's models changed at sim time {} s (a model spawned or "
            "removed): {} ends there, and a replay of this recording stops there",
            exact_seconds(ctx.sim_time), kStateTopic);
        writer_.write(state_channel_, now, std::string(1, char(detail::kStateEnd)));
      } else {
        // Captured into the chunk; the writer's thread finishes it.
        state_.capture(writer_.message(state_channel_, now, state_.prepare(reg)));
        if (state_period_ > Duration{0}) state_next_ = ctx.sim_time + state_period_;
      }
    }
  }

 private:
  // Whether export channel `ch` is recorded at sim time `t`: it is recorded, and latched or due.
  bool due(std::uint32_t ch, Duration t) const {
    return mcap_[ch] != 0 && (latched_[ch] || t >= next_[ch]);
  }

  // How often a channel is recorded: --record-rate's period when given (0: every change), else
  // what a person watching needs (exports::Channel): a sensor's every sample, the world's status
  // at kStatusRateHz, the rest of its state at kDisplayRateHz (the scene: every change, above).
  Duration period_of(const exports::Channel& ch) const {
    if (options_.rate_hz) return state_period_;
    if (ch.samples) return Duration{0};
    return from_seconds(1.0 / (ch.status ? exports::kStatusRateHz : exports::kDisplayRateHz));
  }

  // The state channel: its layout (which models and links, by scoped name) and what replay
  // checks the world against in the channel's metadata (src/record/README.md).
  void add_state_channel(const ecs::Registry& reg) {
    state_ = detail::StateEncoder(reg, detail::state_entities(reg, runner_.world()));
    auto join = [&](const std::vector<ecs::Entity>& es) {
      std::string s;
      for (ecs::Entity e : es) s += (s.empty() ? "" : "\n") + reg.scoped_name(e);
      return s;
    };
    std::map<std::string, std::string> meta{
        {"format", kStateFormat},
        {"world", options_.world_file},
        {"world_name", runner_.options().world_name},
        {"seed", std::to_string(runner_.options().seed)},
        {"step_size_ns", std::to_string(runner_.options().step_size.count())},
        {"kestrel_version", KESTREL_VERSION},
        {"models", join(state_.entities().models)},
        {"links", join(state_.entities().links)},
    };
    state_channel_ = writer_.add_channel(0, kStateTopic, kStateEncoding, meta);
    writer_.set_finisher(state_channel_, state_.finisher());
    topics_.emplace_back(kStateChannelId, kStateTopic);
    state_models_ = reg.count<components::Model>();
    state_links_ = reg.count<components::Link>();
  }

  void close() {
    if (writer_.closed()) return;  // already complete (the run ended): nothing new to report
    writer_.close();
    if (!options_.report) return;
    auto& r = *options_.report;
    r.closed = true;
    r.path = writer_.path();
    r.messages = writer_.messages();
    r.chunks = writer_.chunks();
    r.bytes = writer_.bytes();
    r.topics.clear();
    for (const auto& [id, topic] : topics_) {
      const std::uint16_t ch = id == kStateChannelId ? state_channel_ : mcap_[id];
      r.topics.emplace_back(topic, writer_.channel_messages()[ch]);
    }
  }

  sim::Runner& runner_;
  RecordOptions options_;
  McapWriter writer_;
  std::unique_ptr<exports::ExportModel> model_;
  std::uint32_t stats_ = 0;          // the stats channel's export id
  std::vector<std::uint16_t> mcap_;  // MCAP channel id by export channel id (0: not recorded)
  std::vector<char> latched_;        // by export channel id (not vector<bool>: read every step)
  std::vector<Duration> next_;       // sim time a channel is next due
  std::vector<Duration> period_;     // by export channel id: 1 / its rate (0: every change)
  Duration state_period_{0};         // the state channel's (0: every step), --record-rate's
  std::vector<std::pair<std::uint32_t, std::string>> topics_;
  sim::EventBus::Subscription ended_;
  Duration last_{0};  // the end of the last step recorded
  std::function<bool(std::uint32_t)> wanted_;
  std::function<void(exports::Message&&)> sink_;
  std::vector<std::uint32_t> periodic_;  // recorded channels with a period (export ids)
  bool every_step_ = false;              // a recorded channel of the state at every change
  Duration soonest_{0};                  // when the first of periodic_ is next due
  // The state channel (0: not recorded).
  static constexpr std::uint32_t kStateChannelId = ~0u;  // in topics_
  std::uint16_t state_channel_ = 0;
  detail::StateEncoder state_;
  std::size_t state_models_ = 0, state_links_ = 0;  // Model and Link counts it was laid out for
  bool state_ended_ = false;
  Duration state_next_{0};
};

}  // namespace

std::unique_ptr<System> make_recorder_system(sim::Runner& runner, RecordOptions options) {
  return std::make_unique<Recorder>(runner, std::move(options));
}

}  // namespace kestrel::record
