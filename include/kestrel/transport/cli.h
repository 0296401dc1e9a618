#pragma once
/// @file `kestrel topic`, `kestrel service` and `kestrel model`: Gazebo's command-line tools,
/// working out of the box against a running `kestrel run` (or any Gazebo) on the same partition.
/// Each sets IGN_IP like `kestrel run` (127.0.0.1 unless the user set IGN_IP) before any node.
/// Exit codes: 0 success, 1 the request failed or timed out, 2 usage (bad message type/text).

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

namespace kestrel::transport {

struct TopicOptions {
  enum class Action { kList, kInfo, kEcho, kPublish } action = Action::kList;
  std::string topic;
  std::string msgtype;             ///< kPublish: "ignition.msgs.StringMsg" (or "gz.msgs.StringMsg")
  std::string payload;             ///< kPublish: the message in protobuf text format
  int count = 0;                   ///< kEcho: exit after this many messages (0 = until interrupted)
  std::optional<double> duration;  ///< kEcho: exit after this many seconds
  bool json = false;               ///< kEcho: one JSON object per line instead of text format
};
int run_topic_command(const TopicOptions& options, std::ostream& out, std::ostream& err);

struct ServiceOptions {
  enum class Action { kList, kInfo, kCall } action = Action::kList;
  std::string service;
  std::string reqtype, reptype;  ///< message type names
  std::string request;           ///< the request in protobuf text format
  std::chrono::milliseconds timeout{2000};
  bool json = false;
  /// kCall: call this many times and print round-trip statistics (min/median/p99/max) on err.
  int repeat = 1;
};
int run_service_command(const ServiceOptions& options, std::ostream& out, std::ostream& err);

struct ModelOptions {
  bool list = false;    ///< --list: the world's top-level models
  std::string model;    ///< -m NAME
  bool pose = false;    ///< --pose
  bool links = false;   ///< --link given
  std::string link;     ///< its value ("" = every link)
  bool joints = false;  ///< --joint given
  std::string joint;    ///< its value ("" = every joint)
  std::string world;    ///< "" = the first world /gazebo/worlds names
  std::chrono::milliseconds timeout{3000};
};
int run_model_command(const ModelOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kestrel::transport
