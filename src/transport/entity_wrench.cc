#include "transport/entity_wrench.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <ignition/msgs/header.pb.h>

#include <memory>
#include <mutex>

namespace kestrel::transport::detail {
namespace {

namespace pb = google::protobuf;

// The EntityWrench type in a pool layered over the generated one (its fields' types are the
// generated Header, Entity and Wrench), and a factory whose sub-messages are those classes.
struct Type {
  pb::DescriptorPool pool{pb::DescriptorPool::generated_pool()};
  pb::DynamicMessageFactory factory{&pool};
  const pb::Descriptor* descriptor = nullptr;
  const pb::FieldDescriptor *entity = nullptr, *wrench = nullptr;

  Type() {
    // Make sure the generated files are in the generated pool.
    (void)ignition::msgs::Header::descriptor();
    (void)ignition::msgs::Entity::descriptor();
    (void)ignition::msgs::Wrench::descriptor();
    factory.SetDelegateToGeneratedFactory(true);
    pb::FileDescriptorProto file;
    file.set_name("kestrel/ignition_msgs_entity_wrench.proto");
    file.set_package("ignition.msgs");
    file.set_syntax("proto3");
    file.add_dependency("ignition/msgs/header.proto");
    file.add_dependency("ignition/msgs/entity.proto");
    file.add_dependency("ignition/msgs/wrench.proto");
    pb::DescriptorProto* m = file.add_message_type();
    m->set_name("EntityWrench");
    const auto add = [&](const char* name, int number, const char* type) {
      pb::FieldDescriptorProto* f = m->add_field();
      f->set_name(name);
      f->set_number(number);
      f->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);
      f->set_type(pb::FieldDescriptorProto::TYPE_MESSAGE);
      f->set_type_name(type);
    };
    add("header", 1, ".ignition.msgs.Header");
    add("entity", 2, ".ignition.msgs.Entity");
    add("wrench", 3, ".ignition.msgs.Wrench");
    const pb::FileDescriptor* fd = pool.BuildFile(file);
    descriptor = fd->FindMessageTypeByName("EntityWrench");
    entity = descriptor->FindFieldByName("entity");
    wrench = descriptor->FindFieldByName("wrench");
  }

  std::unique_ptr<pb::Message> make() {
    std::lock_guard lock(m);  // the factory is not thread-safe for new prototypes
    return std::unique_ptr<pb::Message>(factory.GetPrototype(descriptor)->New());
  }
  std::mutex m;
};

Type& type() {
  static Type t;
  return t;
}

}  // namespace

std::optional<EntityWrenchMsg> parse_entity_wrench(const std::string& data) {
  Type& t = type();
  auto msg = t.make();
  if (!msg->ParseFromString(data)) return std::nullopt;
  const pb::Reflection* refl = msg->GetReflection();
  EntityWrenchMsg out;
  if (refl->HasField(*msg, t.entity)) {
    out.entity.emplace();
    out.entity->CopyFrom(refl->GetMessage(*msg, t.entity));
  }
  if (refl->HasField(*msg, t.wrench)) {
    out.wrench.emplace();
    out.wrench->CopyFrom(refl->GetMessage(*msg, t.wrench));
  }
  return out;
}

std::string serialize_entity_wrench(const EntityWrenchMsg& m) {
  Type& t = type();
  auto msg = t.make();
  const pb::Reflection* refl = msg->GetReflection();
  if (m.entity) refl->MutableMessage(msg.get(), t.entity)->CopyFrom(*m.entity);
  if (m.wrench) refl->MutableMessage(msg.get(), t.wrench)->CopyFrom(*m.wrench);
  return msg->SerializeAsString();
}

}  // namespace kestrel::transport::detail
