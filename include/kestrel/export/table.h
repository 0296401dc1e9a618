#pragma once
/// @file One channel's messages as table rows (`kestrel log to-csv`, src/export/README.md,
/// "Tables"): a protobuf message (decoded with the channel's own FileDescriptorSet schema, so any
/// message the export model writes) or a JSON object, flattened into (column, text) cells.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kestrel::exports {

/// One row: (column, text) in the order of the message's fields.
using Cells = std::vector<std::pair<std::string, std::string>>;

/// Flattening rules: nested messages and objects give dotted columns (`translation.x`); a
/// protobuf message whose top level has a repeated message field (`/tf`'s transforms) gives one
/// row per element, its other fields repeated on each; any other repeated protobuf field is one
/// cell `name.count` (its element count) for messages and the elements separated by spaces for
/// numbers; bytes are one cell `name.bytes` (their length); JSON arrays give `key.0`, `key.1`, …
/// Doubles and floats are written in the shortest text that reads back the same value.
class MessageTable {
 public:
  /// `schema_encoding` "protobuf" (`schema_data` a FileDescriptorSet holding `schema_name`), or
  /// `message_encoding` "json" (any JSON Schema).
  /// @throws Error naming the topic when the encoding is another or the schema does not load.
  MessageTable(std::string_view topic, std::string_view schema_name,
               std::string_view schema_encoding, std::string_view schema_data,
               std::string_view message_encoding);
  ~MessageTable();
  MessageTable(const MessageTable&) = delete;
  MessageTable& operator=(const MessageTable&) = delete;

  /// The rows of one message. @throws Error naming the topic when the message does not parse.
  std::vector<Cells> rows(std::string_view data) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::exports
