// Messages as table rows (include/kestrel/export/table.h): protobuf through reflection on the
// channel's own descriptor set, JSON through nlohmann's tree.
#include "kestrel/export/table.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>

#include <nlohmann/json.hpp>

#include "kestrel/core/error.h"

namespace kestrel::exports {

namespace pb = google::protobuf;

struct MessageTable::Impl {
  std::string topic;
  bool json = false;
  pb::DescriptorPool pool;
  pb::DynamicMessageFactory factory{&pool};
  const pb::Message* prototype = nullptr;

  // One scalar of a protobuf field (index for repeated ones, -1 for singular).
  static std::string scalar(const pb::Message& m, const pb::FieldDescriptor* f, int i) {
    const pb::Reflection* r = m.GetReflection();
    using F = pb::FieldDescriptor;
    switch (f->cpp_type()) {
      case F::CPPTYPE_DOUBLE:
        return fmt::format("{}", i < 0 ? r->GetDouble(m, f) : r->GetRepeatedDouble(m, f, i));
      case F::CPPTYPE_FLOAT:
        return fmt::format("{}", i < 0 ? r->GetFloat(m, f) : r->GetRepeatedFloat(m, f, i));
      case F::CPPTYPE_INT32:
        return fmt::format("{}", i < 0 ? r->GetInt32(m, f) : r->GetRepeatedInt32(m, f, i));
      case F::CPPTYPE_INT64:
        return fmt::format("{}", i < 0 ? r->GetInt64(m, f) : r->GetRepeatedInt64(m, f, i));
      case F::CPPTYPE_UINT32:
        return fmt::format("{}", i < 0 ? r->GetUInt32(m, f) : r->GetRepeatedUInt32(m, f, i));
      case F::CPPTYPE_UINT64:
        return fmt::format("{}", i < 0 ? r->GetUInt64(m, f) : r->GetRepeatedUInt64(m, f, i));
      case F::CPPTYPE_BOOL:
        return (i < 0 ? r->GetBool(m, f) : r->GetRepeatedBool(m, f, i)) ? "true" : "false";
      case F::CPPTYPE_ENUM:
        return (i < 0 ? r->GetEnum(m, f) : r->GetRepeatedEnum(m, f, i))->name();
      case F::CPPTYPE_STRING:
        return i < 0 ? r->GetString(m, f) : r->GetRepeatedString(m, f, i);
      case F::CPPTYPE_MESSAGE:
        break;
    }
    return {};
  }

  // Every field of `m` as cells under `prefix`; `expand` (top level only) is the repeated
  // message field that gives rows, left out here.
  static void flatten(const pb::Message& m, const std::string& prefix, Cells& out,
                      const pb::FieldDescriptor* expand = nullptr) {
    const pb::Descriptor* d = m.GetDescriptor();
    const pb::Reflection* r = m.GetReflection();
    for (int k = 0; k < d->field_count(); ++k) {
      const pb::FieldDescriptor* f = d->field(k);
      if (f == expand) continue;
      const std::string name = prefix + f->name();
      const bool bytes = f->type() == pb::FieldDescriptor::TYPE_BYTES;
      if (f->is_repeated()) {
        const int n = r->FieldSize(m, f);
        if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE || bytes) {
          out.emplace_back(name + ".count", std::to_string(n));
        } else {
          std::string joined;
          for (int i = 0; i < n; ++i) joined += (i ? " " : "") + scalar(m, f, i);
          out.emplace_back(name, std::move(joined));
        }
      } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        flatten(r->GetMessage(m, f), name + ".", out);
      } else if (bytes) {
        out.emplace_back(name + ".bytes", std::to_string(r->GetString(m, f).size()));
      } else {
        out.emplace_back(name, scalar(m, f, -1));
      }
    }
  }

  static void flatten(const nlohmann::ordered_json& j, const std::string& name, Cells& out) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) flatten(v, name.empty() ? k : name + "." + k, out);
    } else if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) {
        flatten(j[i], name.empty() ? std::to_string(i) : name + "." + std::to_string(i), out);
      }
    } else if (j.is_string()) {
      out.emplace_back(name, j.get<std::string>());
    } else {
      out.emplace_back(name.empty() ? "value" : name, j.dump());
    }
  }
};

MessageTable::MessageTable(std::string_view topic, std::string_view schema_name,
                           std::string_view schema_encoding, std::string_view schema_data,
                           std::string_view message_encoding)
    : impl_(std::make_unique<Impl>()) {
  impl_->topic = std::string(topic);
  if (message_encoding == "json") {
    impl_->json = true;
    return;
  }
  if (schema_encoding != "protobuf" || message_encoding != "protobuf") {
    throw Error(impl_->topic, fmt::format("messages encoded '{}' with a '{}' schema: tables are "
                                          "made of protobuf and JSON messages",
                                          message_encoding, schema_encoding));
  }
  pb::FileDescriptorSet set;
  if (!set.ParseFromArray(schema_data.data(), static_cast<int>(schema_data.size()))) {
    throw Error(impl_->topic, "its schema is not a protobuf FileDescriptorSet");
  }
  for (const auto& file : set.file()) {
    if (!impl_->pool.FindFileByName(file.name()) && !impl_->pool.BuildFile(file)) {
      throw Error(impl_->topic, fmt::format("its schema's file {} does not load", file.name()));
    }
  }
  const pb::Descriptor* d = impl_->pool.FindMessageTypeByName(std::string(schema_name));
  if (!d) {
    throw Error(impl_->topic,
                fmt::format("its schema's descriptor set has no message {}", schema_name));
  }
  impl_->prototype = impl_->factory.GetPrototype(d);
}

MessageTable::~MessageTable() = default;

std::vector<Cells> MessageTable::rows(std::string_view data) const {
  std::vector<Cells> out;
  if (impl_->json) {
    const auto j = nlohmann::ordered_json::parse(data.begin(), data.end(), nullptr, false);
    if (j.is_discarded()) throw Error(impl_->topic, "a message is not JSON");
    Impl::flatten(j, "", out.emplace_back());
    return out;
  }
  std::unique_ptr<pb::Message> m(impl_->prototype->New());
  if (!m->ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    throw Error(impl_->topic,
                fmt::format("a message does not parse as {}", m->GetDescriptor()->full_name()));
  }
  const pb::Descriptor* d = m->GetDescriptor();
  const pb::FieldDescriptor* expand = nullptr;
  for (int k = 0; k < d->field_count() && !expand; ++k) {
    const auto* f = d->field(k);
    if (f->is_repeated() && f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) expand = f;
  }
  Cells common;
  Impl::flatten(*m, "", common, expand);
  if (!expand) {
    out.push_back(std::move(common));
    return out;
  }
  const int n = m->GetReflection()->FieldSize(*m, expand);
  for (int i = 0; i < n; ++i) {
    Cells row = common;
    Impl::flatten(m->GetReflection()->GetRepeatedMessage(*m, expand, i), expand->name() + ".", row);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace kestrel::exports
