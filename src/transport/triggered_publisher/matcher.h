#pragma once
// Private to src/transport: TriggeredPublisher's message handling (protobuf reflection over
// ignition-msgs 8 types), apart from transport so that tests drive it directly.

#include <google/protobuf/message.h>

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kestrel/core/element.h"
#include "kestrel/core/time.h"

namespace kestrel::transport::detail {

/// An ignition-msgs 8 message of type `type` ("ignition.msgs.X"; Gazebo's newer "gz.msgs.X"
/// names the same type) built from its text form `text` (what `ign topic -m` reads), or
/// Error at `where` naming the type and the parse error.
std::unique_ptr<google::protobuf::Message> make_message(const std::string& type,
                                                        const std::string& text,
                                                        const std::string& where);

/// The ignition-msgs 8 full type name for `type` ("gz.msgs.X" → "ignition.msgs.X").
std::string ign_type_name(const std::string& type);

/// Gazebo's TriggeredPublisher matchers of one `<input>`: every `<match>` must match (none:
/// any message of the input type matches).
class InputMatchers {
 public:
  /// Reads `<input type=...>`'s `<match>` children. @throws Error at the element's line.
  InputMatchers(const std::string& type, const Element& input);
  ~InputMatchers();
  bool matches(const google::protobuf::Message& m) const;
  const std::string& type() const { return type_; }

 private:
  struct Matcher;
  std::string type_;
  const google::protobuf::Descriptor* descriptor_ = nullptr;
  std::vector<std::unique_ptr<Matcher>> matchers_;
};

/// Gazebo's delayed publications: each match waits `delay` of sim time, counted down by every
/// step's dt in PreUpdate; it is due at the step where what is left reaches zero or less.
/// Thread-safe (matches arrive on transport's threads).
class DelayQueue {
 public:
  void add(Duration delay);
  /// Counts every entry down by `dt`; returns how many became due (and drops them).
  std::size_t advance(Duration dt);
  void clear();

 private:
  std::mutex m_;
  std::deque<Duration> left_;
};

}  // namespace kestrel::transport::detail
