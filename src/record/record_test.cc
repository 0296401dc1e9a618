// MCAP files written and read back (the record layout, chunks cut by log time, CRCs, a file cut
// short, a corrupt one, a full disk, closing and continuing) and the recorder on a small world
// (its /tf equal to the registry's poses, one message per change). The independent check against
// @mcap/core is test/record/mcap_core_test.js.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "export/proto/foxglove/schemas.pb.h"
#include "kestrel/components/model.h"
#include "kestrel/core/error.h"
#include "kestrel/record/log_record.h"
#include "kestrel/record/mcap.h"
#include "kestrel/components/physics.h"
#include "kestrel/record/recorder.h"
#include "kestrel/record/replay.h"
#include "kestrel/components/world.h"
#include "kestrel/world/setup.h"
#include "record/bytes.h"
#include "record/state.h"

namespace kestrel::record {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Dir {
  fs::path path = fs::temp_directory_path() / ("kestrel_record_test_" + std::to_string(getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Read {
  std::vector<McapSummary::Channel> channels;
  std::vector<McapMessage> messages;
  std::vector<std::string> data;  // the messages' bytes (their views die with the reader)
  bool ended = false;
};

Read read_all(const fs::path& p, bool allow_truncated = false) {
  Read r;
  r.ended = read_messages(
      p, [&](const McapSummary::Channel& c) { r.channels.push_back(c); },
      [&](const McapMessage& m) {
        r.messages.push_back(m);
        r.data.emplace_back(m.data);
      },
      allow_truncated);
  return r;
}

constexpr std::uint64_t kMs = 1'000'000;

// 3.5 s of a 1 kHz channel and a 10 Hz one.
void write_run(McapWriter& w, std::uint64_t from_ms = 0, std::uint64_t to_ms = 3500) {
  for (std::uint64_t t = from_ms; t < to_ms; ++t) {
    w.advance(t * kMs);
    w.write(1, t * kMs, "fast " + std::to_string(t));
    if (t % 100 == 0) w.write(2, t * kMs, "slow " + std::to_string(t));
  }
}

// Channels 1 (/fast) and 2 (/slow) of one JSON schema.
void two_channels(McapWriter& w) {
  w.add_channel(w.add_schema("s", "jsonschema", "{}"), "/fast", "json");
  w.add_channel(1, "/slow", "json");
}

class Compressions : public ::testing::TestWithParam<Compression> {};

TEST_P(Compressions, WrittenAndReadBackWithChunksOfAtMostOneSecond) {
  Dir d;
  const fs::path file = d.path / "a.mcap";
  {
    McapWriter w(file, McapOptions{GetParam()});
    const auto s = w.add_schema("kestrel.Clock", "jsonschema", R"({"type": "object"})");
    EXPECT_EQ(s, 1);
    EXPECT_EQ(w.add_channel(s, "/fast", "json"), 1);
    EXPECT_EQ(w.add_channel(s, "/slow", "json"), 2);
    write_run(w);
    w.close();
    EXPECT_EQ(w.messages(), 3535u);
    EXPECT_EQ(w.chunks(), 4u);  // [0, 1), [1, 2), [2, 3), [3, 3.5) s
  }
  const McapSummary sum = read_summary(file);
  EXPECT_EQ(sum.library, "kestrel");
  ASSERT_EQ(sum.schemas.size(), 1u);
  EXPECT_EQ(sum.schemas[0].name, "kestrel.Clock");
  EXPECT_EQ(sum.schemas[0].encoding, "jsonschema");
  ASSERT_EQ(sum.channels.size(), 2u);
  EXPECT_EQ(sum.channels[0].topic, "/fast");
  EXPECT_EQ(sum.channels[0].messages, 3500u);
  EXPECT_EQ(sum.channels[1].topic, "/slow");
  EXPECT_EQ(sum.channels[1].messages, 35u);
  EXPECT_EQ(sum.messages, 3535u);
  EXPECT_EQ(sum.start, 0u);
  EXPECT_EQ(sum.end, 3499 * kMs);
  EXPECT_EQ(sum.file_bytes, fs::file_size(file));
  ASSERT_EQ(sum.chunks.size(), 4u);
  for (std::size_t i = 0; i < sum.chunks.size(); ++i) {
    EXPECT_EQ(sum.chunks[i].start, i * 1000 * kMs);
    EXPECT_LT(sum.chunks[i].end - sum.chunks[i].start, 1000 * kMs);
    EXPECT_EQ(sum.chunks[i].compression, compression_name(GetParam()));
    if (GetParam() != Compression::kNone) {
      EXPECT_LT(sum.chunks[i].compressed, sum.chunks[i].uncompressed / 2);
    }
  }
  const Read r = read_all(file);
  EXPECT_TRUE(r.ended);
  ASSERT_EQ(r.channels.size(), 2u);
  ASSERT_EQ(r.messages.size(), 3535u);
  EXPECT_EQ(r.data[0], "fast 0");
  EXPECT_EQ(r.data[1], "slow 0");
  EXPECT_EQ(r.messages[1].channel, 2);
  EXPECT_EQ(r.messages.back().log_time, 3499 * kMs);
  EXPECT_EQ(r.messages.back().publish_time, 3499 * kMs);
  EXPECT_EQ(r.messages.back().sequence, 3499u);  // the channel's count
  EXPECT_EQ(r.data.back(), "fast 3499");
}

INSTANTIATE_TEST_SUITE_P(Record, Compressions,
                         ::testing::Values(Compression::kZstd, Compression::kLz4,
                                           Compression::kNone));

TEST(Mcap, AdvanceCutsAChunkWithoutNewMessages) {
  Dir d;
  McapWriter w(d.path / "a.mcap", {});
  w.add_channel(w.add_schema("s", "jsonschema", "{}"), "/t", "json");
  w.write(1, 0, "x");
  w.advance(999 * kMs);
  EXPECT_EQ(w.chunks(), 0u);
  const auto before = w.bytes();
  w.advance(1000 * kMs);  // 1 s after the chunk's first message: on disk now
  EXPECT_EQ(w.chunks(), 1u);
  EXPECT_GT(w.bytes(), before);
}

TEST(Mcap, ATruncatedFileIsReadUpToItsLastCompleteChunkAndRefusedByInfo) {
  Dir d;
  const fs::path file = d.path / "a.mcap";
  std::uint64_t after_three = 0;
  {
    McapWriter w(file, {});
    two_channels(w);
    write_run(w, 0, 3000);
    w.advance(3000 * kMs);
    after_three = w.bytes();
    write_run(w, 3000, 3500);
    w.close();
  }
  // Cut in the middle of the fourth chunk, as a SIGKILL during its write would.
  const std::string all = slurp(file);
  const fs::path cut = d.path / "cut.mcap";
  std::ofstream(cut, std::ios::binary) << all.substr(0, after_three + 100);
  try {
    read_summary(cut);
    FAIL() << "a truncated file was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected the Footer record"));
    EXPECT_THAT(e.what(), HasSubstr("3 chunks up to log time 2.999 s"));
    EXPECT_THAT(e.what(), HasSubstr(cut.string()));
  }
  EXPECT_THROW(read_all(cut), Error);
  const Read r = read_all(cut, /*allow_truncated=*/true);
  EXPECT_FALSE(r.ended);
  EXPECT_EQ(r.messages.size(), 3030u);
  EXPECT_EQ(r.messages.back().log_time, 2999 * kMs);
}

TEST(Mcap, CorruptSummaryAndChunkAreNamedByOffset) {
  Dir d;
  const fs::path file = d.path / "a.mcap";
  {
    McapWriter w(file, {});
    two_channels(w);
    write_run(w);
  }  // closed by the destructor
  const McapSummary sum = read_summary(file);
  std::string all = slurp(file);
  // A byte of the first chunk index's compression name.
  std::string bad = all;
  bad[all.size() - 8 - 29 - 40] ^= 0x5a;
  std::ofstream(d.path / "bad_summary.mcap", std::ios::binary) << bad;
  try {
    read_summary(d.path / "bad_summary.mcap");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the summary's CRC32 is"));
    EXPECT_THAT(e.what(), HasSubstr("is corrupt"));
  }
  // A byte inside the second chunk's compressed records.
  bad = all;
  bad[sum.chunks[1].offset + sum.chunks[1].length / 2] ^= 0x5a;
  std::ofstream(d.path / "bad_chunk.mcap", std::ios::binary) << bad;
  try {
    read_all(d.path / "bad_chunk.mcap");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("at byte "));
    EXPECT_TRUE(std::string(e.what()).find("CRC32") != std::string::npos ||
                std::string(e.what()).find("do not decompress") != std::string::npos)
        << e.what();
  }
  std::ofstream(d.path / "not.mcap") << "hello, world, not an MCAP file at all";
  EXPECT_THROW(read_summary(d.path / "not.mcap"), Error);
}

TEST(Mcap, AFullDiskIsAnErrorAtTheHeader) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    McapWriter w("/dev/full", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/dev/full: writing the recording failed at its header: No "
                                    "space left on device; the file holds 0 bytes"));
  }
  EXPECT_THROW(McapWriter(fs::path("/nonexistent/dir/a.mcap"), {}), Error);
}

// Chunks are written on the writer's own thread: a write it fails (here a file-size limit, as a
// nearly full disk does) is thrown by the caller's next call, the file cut back to its complete
// chunks, and every later call throws the same; the destructor does not report it again.
TEST(Mcap, AChunkWriteThatFailsIsThrownByTheNextCallAndTheFileKeepsItsChunks) {
  Dir d;
  const fs::path file = d.path / "limited.mcap";
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  auto* old_handler = signal(SIGXFSZ, SIG_IGN);
  std::string first, again;
  std::uint64_t written_ms = 0;
  {
    McapWriter w(file, McapOptions{Compression::kNone});
    two_channels(w);
    rlimit small = before;
    small.rlim_cur = 100'000;  // bytes: a few 1 s chunks of the 1 kHz channel
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    try {
      for (std::uint64_t from = 0;; from += 1000) {
        write_run(w, from, from + 1000);
        written_ms = from + 1000;
        ASSERT_LT(from, 100'000u) << "no write failed";
      }
    } catch (const Error& e) {
      first = e.what();
    }
    try {
      w.close();
    } catch (const Error& e) {
      again = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &before);
  }
  signal(SIGXFSZ, old_handler);
  EXPECT_THAT(first, HasSubstr("failed at a chunk: File too large; the file holds"));
  EXPECT_EQ(again, first);
  const Read r = read_all(file, /*allow_truncated=*/true);
  EXPECT_FALSE(r.ended);
  ASSERT_FALSE(r.messages.empty());
  // Whole chunks of 1 s only: the last message read ends one, and the failure came after.
  EXPECT_EQ((r.messages.back().log_time / kMs + 1) % 1000, 0u) << r.messages.back().log_time;
  EXPECT_LT(r.messages.back().log_time, written_ms * kMs + 1000 * kMs);
  EXPECT_THAT(first,
              HasSubstr(fmt::format(
                  "up to log time {} s",
                  exact_seconds(Duration(static_cast<std::int64_t>(r.messages.back().log_time))))));
}

// The writer's thread stuck in a write (a FIFO nobody reads yet): the caller goes on filling
// chunks until chunks_in_flight of them are unwritten, then its next cut waits, so a kill then
// loses at most (chunks_in_flight + 1) chunk spans; once the FIFO is read every message arrives.
TEST(Mcap, ACutWaitsWhileChunksInFlightAreUnwritten) {
  Dir d;
  const fs::path fifo = d.path / "fifo.mcap";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int in = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader, not reading yet
  ASSERT_GE(in, 0);
  const std::string payload(100'000, 'x');  // over a pipe's 64 KiB: a chunk's write blocks
  std::atomic<int> written{0};
  std::thread producer([&] {
    McapWriter w(fifo, McapOptions{Compression::kNone, std::chrono::milliseconds(10), 4 << 20, 2});
    w.add_channel(0, "/big", "raw");
    for (int i = 0; i < 8; ++i) {
      w.write(1, i * 10 * kMs, payload);  // each message after the first cuts the chunk before
      ++written;
    }
    w.close();
  });
  // Chunk 1 (the message at 0 ms) is stuck in its write, chunk 2 (10 ms) waits behind it, the
  // message at 20 ms opened chunk 3; the one at 30 ms would make 3 chunks unwritten: it waits.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (written < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(written, 3);
  // Read the FIFO to its end: everything arrives, complete.
  ::fcntl(in, F_SETFL, 0);
  std::string all;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(in, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0) << std::strerror(errno);
    all.append(buffer, static_cast<std::size_t>(n));
  }
  producer.join();
  ::close(in);
  EXPECT_EQ(written, 8);
  const fs::path file = d.path / "read.mcap";
  std::ofstream(file, std::ios::binary) << all;
  const Read r = read_all(file);
  ASSERT_EQ(r.messages.size(), 8u);
  EXPECT_EQ(r.messages.back().log_time, 70 * kMs);
  EXPECT_EQ(r.data.back(), payload);
}

// A chunk is cut before the message that would follow chunk_bytes of records: 400-byte messages
// (431 bytes with their record) and chunks of 1000 bytes hold 3 each; the 7th message is alone
// in the last chunk. Each chunk in the writer's hands reaches the file, the lone last one too
// (the writer's thread is woken only when it holds two, and by the close).
TEST(Mcap, AChunkIsCutOnceItsRecordsReachChunkBytes) {
  Dir d;
  const fs::path file = d.path / "a.mcap";
  const std::string payload(400, 'y');
  {
    McapWriter w(file, McapOptions{Compression::kNone, std::chrono::seconds(10), 1000, 3});
    w.add_channel(0, "/a", "raw");
    for (int i = 0; i < 7; ++i) w.write(1, i * kMs, payload);
    w.close();
  }
  const McapSummary sum = read_summary(file);
  ASSERT_EQ(sum.chunks.size(), 3u);
  EXPECT_EQ(sum.chunks[0].uncompressed, 3 * 431u);
  EXPECT_EQ(sum.chunks[0].end, 2 * kMs);
  EXPECT_EQ(sum.chunks[1].start, 3 * kMs);
  EXPECT_EQ(sum.chunks[2].start, 6 * kMs);
  EXPECT_EQ(sum.chunks[2].uncompressed, 431u);
  EXPECT_EQ(read_all(file).messages.size(), 7u);
}

TEST(Mcap, WritingAfterCloseContinuesTheFile) {
  Dir d;
  const fs::path file = d.path / "a.mcap";
  McapWriter w(file, {});
  two_channels(w);
  write_run(w, 0, 1500);
  w.close();
  EXPECT_EQ(read_summary(file).messages, 1515u);
  write_run(w, 1500, 3500);
  w.close();
  const McapSummary sum = read_summary(file);
  EXPECT_EQ(sum.messages, 3535u);
  EXPECT_EQ(sum.end, 3499 * kMs);
  const Read r = read_all(file);  // the data section's CRC covers both parts
  EXPECT_EQ(r.messages.size(), 3535u);
}

// A finisher's messages reach the file as it made them, of another length than written; the
// other channel's as written; every Message Index entry (read from the uncompressed file) points
// at its message's record in its chunk.
TEST(Mcap, AFinishersMessagesAndTheirIndexesAreAsItMadeThem) {
  Dir d;
  const fs::path file = d.path / "a.mcap";
  {
    McapWriter w(file, McapOptions{Compression::kNone, std::chrono::milliseconds(250)});
    two_channels(w);
    w.set_finisher(1, [](std::string_view raw, std::string& out) {
      out = "finished " + std::string(raw) + (raw.size() % 2 ? "!" : "!!!");
    });
    write_run(w);
    w.close();
  }
  const Read r = read_all(file);
  ASSERT_EQ(r.messages.size(), 3535u);
  std::size_t fast = 0;
  for (std::size_t i = 0; i < r.messages.size(); ++i) {
    const std::uint64_t t = r.messages[i].log_time / kMs;
    if (r.messages[i].channel == 1) {
      const std::string raw = "fast " + std::to_string(t);
      EXPECT_EQ(r.data[i], "finished " + raw + (raw.size() % 2 ? "!" : "!!!"));
      ++fast;
    } else {
      EXPECT_EQ(r.data[i], "slow " + std::to_string(t));
    }
  }
  EXPECT_EQ(fast, 3500u);
  // The data section: chunks (uncompressed) and their message indexes.
  const std::string f = slurp(file);
  using detail::get;
  std::size_t at = detail::kMagicSize, chunks = 0, entries = 0;
  std::string_view records;
  while (at + 9 <= f.size()) {
    const auto op = static_cast<std::uint8_t>(f[at]);
    const auto len = get<std::uint64_t>(f.data() + at + 1);
    const char* body = f.data() + at + 9;
    if (op == detail::kChunk) {
      ++chunks;
      const auto size = get<std::uint64_t>(body + 16);
      const auto compression = get<std::uint32_t>(body + 28);
      records = std::string_view(body + 32 + compression + 8, size);
      ASSERT_EQ(get<std::uint64_t>(body + 32 + compression), size);
    } else if (op == detail::kMessageIndex) {
      const auto channel = get<std::uint16_t>(body);
      const auto n = get<std::uint32_t>(body + 2) / 16;
      for (std::uint32_t k = 0; k < n; ++k) {
        const auto time = get<std::uint64_t>(body + 6 + 16 * k);
        const auto offset = get<std::uint64_t>(body + 6 + 16 * k + 8);
        ASSERT_LT(offset + 31, records.size());
        EXPECT_EQ(static_cast<std::uint8_t>(records[offset]), detail::kMessage);
        EXPECT_EQ(get<std::uint16_t>(records.data() + offset + 9), channel);
        EXPECT_EQ(get<std::uint64_t>(records.data() + offset + 15), time);
        const auto data_len = get<std::uint64_t>(records.data() + offset + 1) - 22;
        const std::string data(records.substr(offset + 31, data_len));
        EXPECT_EQ(data.starts_with(channel == 1 ? "finished fast " : "slow "), true) << data;
        ++entries;
      }
    } else if (op == detail::kDataEnd) {
      break;
    }
    at += 9 + len;
  }
  EXPECT_EQ(chunks, 14u);  // 3.5 s in chunks of 0.25 s
  EXPECT_EQ(entries, 3535u);
}

// The recorder on a box falling onto the ground.
constexpr const char* kWorld = R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ignored"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
  <model name="ground"><static>true</static><link name="link">
    <collision name="c"><geometry><plane><normal>0 0 1</normal><size>20 20</size></plane></geometry></collision>
    <visual name="v"><geometry><plane><normal>0 0 1</normal><size>20 20</size></plane></geometry></visual>
  </link></model>
  <model name="box"><pose>0 0 2 0 0 0</pose><link name="link">
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.5 0.4 0.3</size></box></geometry></collision>
    <visual name="v"><geometry><box><size>0.5 0.4 0.3</size></box></geometry></visual>
  </link></model>
</world></sdf>)";

struct World {
  Dir d;
  std::unique_ptr<sim::Runner> runner = std::make_unique<sim::Runner>(sim::Runner::Options{});
  World() { std::ofstream(d.path / "w.sdf") << kWorld; }
  void load(RecordOptions o) {
    world::load_world_into_runner(d.path / "w.sdf", *runner);
    runner->add_system(make_recorder_system(*runner, std::move(o)), runner->world(), nullptr,
                       "kestrel::record::Recorder", "test");
    runner->configure();
  }
};

TEST(Recorder, RecordsEveryChangeWithSimTimeAndTheRegistrysPoses) {
  RecordReport report;  // outlives the recorder
  World w;
  const fs::path file = w.d.path / "r.mcap";
  RecordOptions o{file.string(), {}, Compression::kZstd, &report};
  o.rate_hz = 0;  // every change
  w.load(o);
  w.runner->run(2500);         // 2.5 s: the box lands (and rests) before the end
  ASSERT_TRUE(report.closed);  // sim::RunEnded
  const auto box = w.runner->registry().find_scoped("w::box::link");
  ASSERT_NE(box, ecs::kNullEntity);
  const auto X_end = w.runner->registry().get<components::WorldPose>(box).value;

  const McapSummary sum = read_summary(file);
  std::map<std::string, McapSummary::Channel> by_topic;
  for (const auto& c : sum.channels) by_topic[c.topic] = c;
  ASSERT_EQ(sum.channels.size(), 5u);
  EXPECT_EQ(by_topic["/world/w/clock"].messages, 2500u);  // every step
  EXPECT_EQ(by_topic["/kestrel/state"].messages, 2500u);
  EXPECT_EQ(by_topic["/world/w/stats"].messages, 2500u);
  EXPECT_EQ(by_topic["/scene"].messages, 1u);
  const auto tf = by_topic["/tf"];
  EXPECT_GT(tf.messages, 100u);  // the box moves (and jitters on the ground)
  EXPECT_LE(tf.messages, 2500u);
  EXPECT_EQ(sum.start, 1 * kMs);
  EXPECT_EQ(sum.end, 2500 * kMs);
  EXPECT_EQ(sum.chunks.size(), 10u);  // of 0.25 s
  for (const auto& [topic, count] : report.topics) EXPECT_EQ(count, by_topic[topic].messages);
  std::map<std::string, std::string> schema_of;
  for (const auto& s : sum.schemas) schema_of[std::to_string(s.id)] = s.name;
  EXPECT_EQ(schema_of[std::to_string(tf.schema)], "foxglove.FrameTransforms");
  EXPECT_EQ(tf.encoding, "protobuf");

  // The last /tf has the box's final pose, stamped with its log time.
  const Read r = read_all(file);
  const McapMessage* last = nullptr;
  std::size_t last_i = 0;
  for (std::size_t i = 0; i < r.messages.size(); ++i) {
    if (r.messages[i].channel == tf.id) last = &r.messages[(last_i = i)];
  }
  ASSERT_NE(last, nullptr);
  foxglove::FrameTransforms msg;
  ASSERT_TRUE(msg.ParseFromString(r.data[last_i]));
  bool found = false;
  for (const auto& t : msg.transforms()) {
    if (t.child_frame_id() != "box::link") continue;
    found = true;
    EXPECT_EQ(t.translation().z(), X_end.Pos().Z());
    EXPECT_EQ(t.rotation().w(), X_end.Rot().W());
    EXPECT_EQ(
        static_cast<std::uint64_t>(t.timestamp().seconds()) * 1'000'000'000 + t.timestamp().nanos(),
        last->log_time);
  }
  EXPECT_TRUE(found);
  EXPECT_LT(X_end.Pos().Z(), 0.2);  // it landed
}

TEST(Recorder, NothingMovesNoTransformsAfterTheFirst) {
  Dir d;
  std::string world = kWorld;
  world.replace(world.find("<model name=\"box\">"), 18,
                "<model name=\"box\"><static>true</static>");
  std::ofstream(d.path / "w.sdf") << world;
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(d.path / "w.sdf", runner);
  RecordOptions o{(d.path / "r.mcap").string(), {}, Compression::kZstd, nullptr};
  o.rate_hz = 0;  // every change
  runner.add_system(make_recorder_system(runner, o), runner.world(), nullptr,
                    "kestrel::record::Recorder", "test");
  runner.configure();
  runner.run(300);
  const McapSummary sum = read_summary(d.path / "r.mcap");
  for (const auto& c : sum.channels) {
    EXPECT_EQ(c.messages, c.topic == "/tf" || c.topic == "/scene" ? 1u : 300u) << c.topic;
  }
}

TEST(Recorder, ARateKeepsAtMostThatManyMessagesPerSecondOfSimTime) {
  World w;
  const fs::path file = w.d.path / "r.mcap";
  RecordOptions o{file.string(), {}, Compression::kZstd, nullptr};
  o.rate_hz = 100;
  w.load(o);
  w.runner->run(1000);
  const McapSummary sum = read_summary(file);
  for (const auto& c : sum.channels) {
    // Every 10 ms from the first step (1, 11, ..., 991 ms); the scene once.
    EXPECT_EQ(c.messages, c.topic == "/scene" ? 1u : 100u) << c.topic;
  }
  const Read r = read_all(file);
  EXPECT_EQ(r.messages.back().log_time, 991 * kMs);
}

// Without a rate: what the viewer sends, in sim time — the world's status (stats, clock) at
// 10 Hz, its state (/tf) at 60 Hz, each due 1/rate after its last message (so every 17 steps of
// 1 ms), the scene once — and a state sample every step.
TEST(Recorder, ByDefaultTheViewersRatesAndAStateSampleEveryStep) {
  World w;
  const fs::path file = w.d.path / "r.mcap";
  w.load(RecordOptions{file.string(), {}, Compression::kZstd, nullptr});
  w.runner->run(1000);
  const McapSummary sum = read_summary(file);
  std::map<std::string, std::uint64_t> count;
  for (const auto& c : sum.channels) count[c.topic] = c.messages;
  EXPECT_EQ(count["/world/w/clock"], 10u);  // 1, 101, ..., 901 ms
  EXPECT_EQ(count["/world/w/stats"], 10u);
  EXPECT_EQ(count["/scene"], 1u);
  EXPECT_EQ(count["/kestrel/state"], 1000u);
  EXPECT_GT(count["/tf"], 10u);   // the box falls and lands
  EXPECT_LE(count["/tf"], 59u);   // 1, 18, 35, ..., 987 ms at the most
  const Read r = read_all(file);
  std::uint16_t tf = 0;
  for (const auto& c : r.channels) {
    if (c.topic == "/tf") tf = c.id;
  }
  std::vector<std::uint64_t> tf_times;
  for (const auto& m : r.messages) {
    if (m.channel == tf) tf_times.push_back(m.log_time);
  }
  for (std::size_t i = 1; i < tf_times.size(); ++i) {
    EXPECT_GE(tf_times[i] - tf_times[i - 1], 17 * kMs);  // never closer than 1/60 s
  }
}

TEST(Recorder, TwoRecordingsOfTheSameRunDifferOnlyInTheStatsWallClock) {
  std::vector<Read> reads;
  for (int i = 0; i < 2; ++i) {
    World w;
    const fs::path file = w.d.path / "r.mcap";
    RecordOptions o{file.string(), {}, Compression::kZstd, nullptr};
    o.rate_hz = 0;  // every change
    w.load(o);
    w.runner->run(1200);
    reads.push_back(read_all(file));
  }
  ASSERT_EQ(reads[0].messages.size(), reads[1].messages.size());
  std::uint16_t stats = 0;
  for (const auto& c : reads[0].channels) {
    if (c.topic == "/world/w/stats") stats = c.id;
  }
  std::size_t same = 0;
  for (std::size_t i = 0; i < reads[0].messages.size(); ++i) {
    EXPECT_EQ(reads[0].messages[i].channel, reads[1].messages[i].channel);
    EXPECT_EQ(reads[0].messages[i].log_time, reads[1].messages[i].log_time);
    if (reads[0].messages[i].channel == stats) continue;
    same += reads[0].data[i] == reads[1].data[i];
  }
  EXPECT_EQ(same, reads[0].messages.size() - 1200);
}

TEST(Recorder, TopicPatternsSelectChannelsAndOneMatchingNothingIsAnError) {
  {
    World w;
    const fs::path file = w.d.path / "r.mcap";
    w.load(RecordOptions{file.string(), {"/world/*/clock", "/tf"}, Compression::kLz4, nullptr});
    w.runner->run(100);
    const McapSummary sum = read_summary(file);
    ASSERT_EQ(sum.channels.size(), 2u);
    EXPECT_EQ(sum.channels[0].topic, "/tf");
    EXPECT_EQ(sum.channels[1].topic, "/world/w/clock");
    EXPECT_EQ(sum.chunks.at(0).compression, "lz4");
  }
  World w;
  try {
    w.load(RecordOptions{(w.d.path / "r.mcap").string(), {"/tff"}, Compression::kZstd, nullptr});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'/tff' matches no channel of the world; its channels are: "
                                    "/tf, /scene, /world/w/stats, /world/w/clock"));
  }
}

// Replay: a second runner with the world's entities only, driven by the state channel, ends
// with the recorded run's pose and velocity bit for bit.
TEST(Replay, DrivesTheRegistryWithTheRecordedStateBitForBit) {
  World w;
  const fs::path file = w.d.path / "r.mcap";
  RecordOptions o{file.string(), {}, Compression::kZstd, nullptr};
  o.world_file = (w.d.path / "w.sdf").string();
  w.load(o);
  w.runner->run(1500);
  const auto& reg = w.runner->registry();
  const auto box = reg.find_scoped("w::box::link");
  const auto X_end = reg.get<components::WorldPose>(box).value;
  const auto v_end = reg.get<components::WorldLinearVelocity>(box).value;
  const auto X_model = reg.get<components::WorldPose>(reg.find_scoped("w::box")).value;
  const auto P_link = reg.get<components::Pose>(box).value;
  const auto P_model = reg.get<components::Pose>(reg.find_scoped("w::box")).value;
  w.runner.reset();  // closes the file

  auto rec = std::make_shared<Recording>(read_recording(file));
  EXPECT_TRUE(rec->complete);
  EXPECT_EQ(rec->samples.size(), 1500u);
  EXPECT_EQ(rec->samples.front().time, std::chrono::milliseconds(1));
  EXPECT_EQ(rec->world, o.world_file);
  EXPECT_EQ(rec->models, std::vector<std::string>{"w::box"});  // the ground is static
  EXPECT_EQ(rec->links, std::vector<std::string>{"w::box::link"});
  EXPECT_EQ(rec->step_size, std::chrono::milliseconds(1));
  // Both relative poses are the ones the world poses give (format 2): kind, the model's presence
  // byte and world pose, the link's presence byte, world pose and velocities — 163 bytes, not
  // the 275 with both poses written.
  EXPECT_EQ(rec->format, kStateFormat);
  EXPECT_EQ(rec->samples.back().size, 1u + (1 + 56) + (1 + 56 + 48));

  sim::Runner r(sim::Runner::Options{});
  world::WorldSetupOptions so;
  so.add_systems = false;
  world::load_world_into_runner(w.d.path / "w.sdf", r, so);
  EXPECT_EQ(r.systems().size(), 0u);  // no physics: only the replay moves the box
  check_world(*rec, r.registry(), r.world(), r.options().step_size);
  r.add_system(make_replay_system(rec), r.world(), nullptr, "kestrel::record::Replay", "test");
  r.configure();
  const auto rbox = r.registry().find_scoped("w::box::link");
  const double z0 = r.registry().get<components::WorldPose>(rbox).value.Pos().Z();
  r.run(1500);
  const auto X = r.registry().get<components::WorldPose>(rbox).value;
  const auto v = r.registry().get<components::WorldLinearVelocity>(rbox).value;
  EXPECT_EQ(z0, 2.0);
  EXPECT_EQ(X.Pos().X(), X_end.Pos().X());
  EXPECT_EQ(X.Pos().Z(), X_end.Pos().Z());
  EXPECT_EQ(X.Rot().W(), X_end.Rot().W());
  EXPECT_EQ(X.Rot().Z(), X_end.Rot().Z());
  EXPECT_EQ(v.Z(), v_end.Z());
  EXPECT_EQ(r.registry().get<components::WorldPose>(r.registry().find_scoped("w::box")).value.Pos().Z(),
            X_model.Pos().Z());
  // The relative poses rebuilt from the world poses are physics' own, bit for bit.
  const auto same = [](const ignition::math::Pose3d& a, const ignition::math::Pose3d& b) {
    return std::memcmp(&a.Pos(), &b.Pos(), sizeof(double) * 3) == 0 && a.Rot().W() == b.Rot().W() &&
           a.Rot().X() == b.Rot().X() && a.Rot().Y() == b.Rot().Y() && a.Rot().Z() == b.Rot().Z();
  };
  const auto& rreg = r.registry();
  EXPECT_TRUE(same(rreg.get<components::Pose>(rbox).value, P_link));
  EXPECT_TRUE(same(rreg.get<components::Pose>(rreg.find_scoped("w::box")).value, P_model));
}

// A sample leaves out only the relative poses its world poses give bit for bit: a link's pose
// that is not (set by something other than physics) is written and read back as it was; a
// nested model's pose comes from its parent model's.
TEST(Replay, APoseIsLeftOutOnlyWhenTheParentsWorldPoseGivesItBitForBit) {
  namespace c = components;
  using ignition::math::Pose3d;
  ecs::Registry reg;
  const ecs::Entity world = reg.create();
  reg.add<c::World>(world);
  reg.add<c::Name>(world).value = "w";
  auto entity = [&](ecs::Entity parent, const char* name, bool link, const Pose3d& X_W) {
    const ecs::Entity e = reg.create(parent);
    reg.add<c::Name>(e).value = name;
    if (link) {
      reg.add<c::Link>(e);
      reg.add<c::WorldLinearVelocity>(e).value = {1, 2, 3};
      reg.add<c::WorldAngularVelocity>(e).value = {4, 5, 6};
    } else {
      reg.add<c::Model>(e);
    }
    reg.add<c::WorldPose>(e).value = X_W;
    return e;
  };
  const Pose3d X_WM(1, 2, 3, 0.1, 0.2, 0.3), X_WN(1.5, 2, 3, 0.2, 0.2, 0.3);
  const Pose3d X_WA(1.1, 2.2, 3.3, 0.3, -0.2, 0.1), X_WB(-1, 0.5, 3, 0, 0, 2);
  const ecs::Entity m = entity(world, "m", false, X_WM);
  const ecs::Entity n = entity(m, "n", false, X_WN);
  const ecs::Entity a = entity(m, "a", true, X_WA);
  const ecs::Entity b = entity(n, "b", true, X_WB);
  const Pose3d P_b(0.25, 0, 0, 0, 0, 0);  // not what X_WN and X_WB give
  reg.add<c::Pose>(m).value = X_WM;
  reg.add<c::Pose>(n).value = detail::state_pose_from_parent(&X_WM, X_WN);
  reg.add<c::Pose>(a).value = detail::state_pose_from_parent(&X_WM, X_WA);
  reg.add<c::Pose>(b).value = P_b;

  detail::StateEncoder enc(reg, detail::state_entities(reg, world));
  std::string sample;
  enc.encode(reg, sample);
  // Three poses left out, b's written: 1 + 2·(1 + 56) + 2·(1 + 56 + 48) + 56.
  EXPECT_EQ(sample.size(), 1u + 2 * 57 + 2 * 105 + 56);
  EXPECT_EQ(static_cast<std::uint8_t>(sample[1]), detail::kHasWorldPose | detail::kPoseFromParent);

  McapSummary::Channel ch;
  ch.topic = kStateTopic;
  ch.encoding = kStateEncoding;
  std::vector<ecs::Entity> order;
  auto names = [&](const std::vector<ecs::Entity>& es) {
    std::string out;
    for (ecs::Entity e : es) {
      out += (out.empty() ? "" : "\n") + reg.scoped_name(e);
      order.push_back(e);
    }
    return out;
  };
  const std::string models = names(enc.entities().models), links = names(enc.entities().links);
  ch.metadata = {{"format", kStateFormat}, {"world", "/w.sdf"},          {"world_name", "w"},
                 {"seed", "0"},            {"step_size_ns", "1000000"}, {"kestrel_version", "test"},
                 {"models", models},       {"links", links}};
  const StateTable table(ch, "t.mcap");
  const auto rows = table.rows(std::chrono::milliseconds(1), sample);
  ASSERT_EQ(rows.size(), 4u);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order.front(), m);
  for (std::size_t i = 0; i < 4; ++i) {
    std::map<std::string, std::string> cells(rows[i].begin(), rows[i].end());
    EXPECT_EQ(cells["entity"], reg.scoped_name(order[i]));
    const Pose3d& P = reg.get<c::Pose>(order[i]).value;
    EXPECT_EQ(cells["rel_x"], fmt::format("{}", P.Pos().X())) << cells["entity"];
    EXPECT_EQ(cells["rel_z"], fmt::format("{}", P.Pos().Z())) << cells["entity"];
    EXPECT_EQ(cells["rel_qw"], fmt::format("{}", P.Rot().W())) << cells["entity"];
    EXPECT_EQ(cells["rel_qz"], fmt::format("{}", P.Rot().Z())) << cells["entity"];
  }

  // A presence byte with a bit the format does not define, or the derived pose and the pose
  // both, is refused naming the byte.
  for (const std::uint8_t bad : {std::uint8_t(64), std::uint8_t(detail::kHasPose | detail::kPoseFromParent)}) {
    std::string broken = sample;
    broken[1] = static_cast<char>(bad | detail::kHasWorldPose);
    try {
      table.rows(std::chrono::milliseconds(1), broken);
      ADD_FAILURE() << "presence byte " << int(bad) << " accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("a model's presence byte at byte 1 is"));
    }
  }
  // Format 1 knows no poses given by the parent's.
  ch.metadata["format"] = kStateFormatV1;
  EXPECT_THROW(StateTable(ch, "t.mcap").rows(std::chrono::milliseconds(1), sample), Error);

  // More rotor speeds than the sample's uint16 count holds: an error naming the model, not a
  // garbled sample.
  reg.add<c::RotorVelocities>(m).velocity.assign(65536, 1.0);
  try {
    enc.encode(reg, sample);
    ADD_FAILURE() << "65536 rotor speeds encoded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'w::m'"));
    EXPECT_THAT(e.what(), HasSubstr("at most 65535 rotor speeds of a model; RotorVelocities has 65536"));
  }
}

TEST(Replay, AWorldThatDoesNotMatchIsRefusedNamingWhatDiffers) {
  World w;
  const fs::path file = w.d.path / "r.mcap";
  RecordOptions o{file.string(), {}, Compression::kZstd, nullptr};
  o.world_file = (w.d.path / "w.sdf").string();
  w.load(o);
  w.runner->run(10);
  w.runner.reset();
  const Recording rec = read_recording(file);
  std::string world = kWorld;
  world.replace(world.find("<model name=\"box\">"), 17, "<model name=\"crate\">");
  std::ofstream(w.d.path / "other.sdf") << world;
  sim::Runner r(sim::Runner::Options{});
  world::WorldSetupOptions so;
  so.add_systems = false;
  world::load_world_into_runner(w.d.path / "other.sdf", r, so);
  try {
    check_world(rec, r.registry(), r.world(), std::chrono::milliseconds(2));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string() + ": does not match the world"));
    EXPECT_THAT(e.what(), HasSubstr("model 'w::box' was recorded and is not in the world"));
    EXPECT_THAT(e.what(), HasSubstr("model 'w::crate' is in the world and was not recorded"));
    EXPECT_THAT(e.what(), HasSubstr("link 'w::box::link' was recorded and is not in the world"));
    EXPECT_THAT(e.what(), HasSubstr("the world's step size is 0.002 s, the recording's 0.001 s"));
  }
}

TEST(Replay, AFileThatIsNotMcapOrHasNoStateIsAnErrorNamingIt) {
  Dir d;
  std::ofstream(d.path / "x.mcap") << "sim_time,model\n";
  try {
    read_recording(d.path / "x.mcap");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr((d.path / "x.mcap").string()));
    EXPECT_THAT(e.what(), HasSubstr("not an MCAP file"));
  }
  World w;
  const fs::path file = w.d.path / "r.mcap";
  w.load(RecordOptions{file.string(), {"/tf"}, Compression::kZstd, nullptr});
  w.runner->run(10);
  w.runner.reset();
  try {
    read_recording(file);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no /kestrel/state channel"));
  }
}

// Gazebo's LogRecord <plugin> in the test world, with `params` inside.
std::string log_record_world(const std::string& params) {
  std::string w = kWorld;
  w.replace(w.find("<model"), 0,
            "<plugin filename=\"gz-sim-log-system\" name=\"gz::sim::systems::LogRecord\">" +
                params + "</plugin>\n  ");
  return w;
}

// LogRecord's parameters as gz-sim (Fortress) reads them: <path> a folder (relative to the
// working directory; Gazebo's ~/.gz/sim/log/<time> without it), <record_resources> and
// <compress> false or refused at their lines, anything else refused; without a program that
// records for it (LogRecordTaken), configure is an error at the plugin's line.
TEST(LogRecord, ParametersAsGazeboReadsThemAndNoSilentWorldWithoutARecorder) {
  Dir d;
  auto options = [&](const std::string& params) {
    std::ofstream(d.path / "lr.sdf") << log_record_world(params);
    sim::Runner runner(sim::Runner::Options{});
    world::load_world_into_runner(d.path / "lr.sdf", runner);
    for (const auto& s : runner.systems()) {
      if (s.name == "kestrel::systems::LogRecord") return log_record_options(*s.config);
    }
    throw Error("no LogRecord system in the runner");
  };
  auto error = [&](const std::string& params) {
    try {
      options(params);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(options("<path>" + (d.path / "logs").string() + "</path>").file,
            (d.path / "logs" / "state.mcap").string());
  EXPECT_EQ(options("<path>rel</path><compress>false</compress>").folder,
            (fs::current_path() / "rel").string());
  setenv("HOME", d.path.c_str(), 1);
  EXPECT_THAT(options("").folder, HasSubstr((d.path / ".gz" / "sim" / "log").string() + "/"));
  EXPECT_THAT(error("<record_resources>true</record_resources>"),
              HasSubstr("lr.sdf:4: LogRecord <record_resources>true: Kestrel does not copy"));
  EXPECT_THAT(error("<compress>1</compress>"),
              HasSubstr("LogRecord <compress>true: Kestrel does not zip the log folder"));
  EXPECT_THAT(error("<compress>yes</compress>"),
              HasSubstr("lr.sdf:4: <compress> expected a boolean (true, false, 1 or 0), found 'yes'"));
  EXPECT_THAT(error("<compress_path>a.zip</compress_path>"),
              HasSubstr("<compress_path>: only read with <compress>true"));
  EXPECT_THAT(error("<path>x</path><record_topic>/a</record_topic>"),
              HasSubstr("unknown parameter <record_topic>"));
  std::ofstream(d.path / "file") << "";
  EXPECT_THAT(error("<path>" + (d.path / "file").string() + "</path>"),
              HasSubstr("is not a folder"));

  std::ofstream(d.path / "lr.sdf") << log_record_world("<path>logs</path>");
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(d.path / "lr.sdf", runner);
  try {
    runner.configure();
    ADD_FAILURE() << "a LogRecord that nothing records for configured";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("lr.sdf:4: LogRecord: this program does not record the "
                                    "world"));
  }
}

}  // namespace
}  // namespace kestrel::record
