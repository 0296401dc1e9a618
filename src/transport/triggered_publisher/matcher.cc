// TriggeredPublisher's matching, as gz-sim's (Fortress) TriggeredPublisher.cc computes it: a
// full match compares the whole message with protobuf's MessageDifferencer (floats
// approximately, within `tol`), a field match compares one (dotted) field, a repeated one as a
// set that must contain the match; logic_type="negative" inverts a comparison.
#include "transport/triggered_publisher/matcher.h"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <cmath>
#include <ignition/msgs/Factory.hh>
#include <limits>

namespace kestrel::transport::detail {
namespace {

namespace pb = google::protobuf;

// Collects the text parser's complaints (line, column, message).
class Complaints final : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (text.empty()) text = fmt::format("line {}, column {}: {}", line + 1, column + 1, message);
  }
  std::string text;
};

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

std::string ign_type_name(const std::string& type) {
  if (type.starts_with("gz.msgs.")) return "ignition.msgs." + type.substr(8);
  return type;
}

std::unique_ptr<pb::Message> make_message(const std::string& type, const std::string& text,
                                          const std::string& where) {
  auto m = ignition::msgs::Factory::New(ign_type_name(type));
  if (!m) {
    throw Error(where, fmt::format("TriggeredPublisher: '{}' is not a message type of "
                                   "ignition-msgs 8",
                                   type));
  }
  if (trimmed(text).empty()) return std::unique_ptr<pb::Message>(m.release());
  pb::TextFormat::Parser parser;
  Complaints complaints;
  parser.RecordErrorsTo(&complaints);
  if (!parser.ParseFromString(text, m.get())) {
    throw Error(where, fmt::format("TriggeredPublisher: '{}' is not a {} in text form: {}",
                                   trimmed(text), m->GetTypeName(), complaints.text));
  }
  return std::unique_ptr<pb::Message>(m.release());
}

struct InputMatchers::Matcher {
  bool positive = true;
  std::unique_ptr<pb::Message> reference;        // the whole message, or its field set
  std::vector<const pb::FieldDescriptor*> path;  // a field match: the field, through parents
  pb::util::DefaultFieldComparator comparator;
  mutable pb::util::MessageDifferencer diff;

  bool matches(const pb::Message& in) const {
    if (path.empty()) return positive == diff.Compare(*reference, in);
    const pb::Message* a = reference.get();
    const pb::Message* b = &in;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      a = &a->GetReflection()->GetMessage(*a, path[i]);
      b = &b->GetReflection()->GetMessage(*b, path[i]);
    }
    return positive == diff.CompareWithFields(*a, *b, {path.back()}, {path.back()});
  }
};

InputMatchers::InputMatchers(const std::string& type, const Element& input) : type_(type) {
  const auto probe = make_message(type, "", input.where());
  descriptor_ = probe->GetDescriptor();
  for (const Element* me : input.children("match")) {
    me->reject_unknown_attributes({"logic_type", "field", "tol"});
    auto m = std::make_unique<Matcher>();
    const std::string logic = me->attribute("logic_type").value_or("positive");
    if (logic != "positive" && logic != "negative") {
      throw Error(me->where(), fmt::format("TriggeredPublisher: logic_type must be 'positive' or "
                                           "'negative', found '{}'",
                                           logic));
    }
    m->positive = logic == "positive";
    const std::string text = trimmed(me->text());
    if (text.empty()) {
      throw Error(me->where(),
                  "TriggeredPublisher: <match> is empty (Gazebo: a matcher that "
                  "cannot be created)");
    }
    m->comparator.set_float_comparison(pb::util::DefaultFieldComparator::APPROXIMATE);
    double tol = 1e-8;
    if (const auto t = me->attribute("tol")) {
      try {
        std::size_t used = 0;
        tol = std::stod(*t, &used);
        if (used != t->size() || !(tol >= 0) || !std::isfinite(tol))
          throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw Error(me->where(), fmt::format("TriggeredPublisher: tol must be a number >= 0, "
                                             "found '{}'",
                                             *t));
      }
    }
    m->comparator.SetDefaultFractionAndMargin(std::numeric_limits<double>::min(), tol);
    m->diff.set_field_comparator(&m->comparator);
    m->reference.reset(probe->New());
    if (const auto field = me->attribute("field")) {
      // The dotted path to the field, through singular message fields.
      pb::Message* sub = m->reference.get();
      const pb::Descriptor* d = sub->GetDescriptor();
      std::size_t start = 0;
      while (true) {
        const auto dot = field->find('.', start);
        const std::string name = field->substr(start, dot - start);
        const pb::FieldDescriptor* f = d->FindFieldByName(name);
        if (!f) {
          throw Error(me->where(), fmt::format("TriggeredPublisher: field '{}' is not a field of "
                                               "{}",
                                               name, d->full_name()));
        }
        m->path.push_back(f);
        if (dot == std::string::npos) break;
        if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) {
          throw Error(me->where(),
                      fmt::format("TriggeredPublisher: field '{}' of {} has no subfields to match "
                                  "(a repeated message's subfields cannot be matched, as in "
                                  "Gazebo)",
                                  name, d->full_name()));
        }
        sub = sub->GetReflection()->MutableMessage(sub, f);
        d = f->message_type();
        start = dot + 1;
      }
      if (m->path.back()->is_repeated()) {
        m->diff.set_scope(pb::util::MessageDifferencer::PARTIAL);
        m->diff.set_repeated_field_comparison(pb::util::MessageDifferencer::AS_SET);
      }
      if (!pb::TextFormat::ParseFieldValueFromString(text, m->path.back(), sub)) {
        throw Error(me->where(), fmt::format("TriggeredPublisher: '{}' is not a value of field "
                                             "'{}' of {}",
                                             text, *field, probe->GetTypeName()));
      }
    } else {
      pb::TextFormat::Parser parser;
      Complaints complaints;
      parser.RecordErrorsTo(&complaints);
      if (!parser.ParseFromString(text, m->reference.get())) {
        throw Error(me->where(),
                    fmt::format("TriggeredPublisher: '{}' is not a {} in text form: {}", text,
                                probe->GetTypeName(), complaints.text));
      }
    }
    matchers_.push_back(std::move(m));
  }
}

InputMatchers::~InputMatchers() = default;

bool InputMatchers::matches(const pb::Message& m) const {
  if (m.GetDescriptor() != descriptor_) return false;  // Gazebo logs the other type
  for (const auto& matcher : matchers_) {
    if (!matcher->matches(m)) return false;
  }
  return true;
}

void DelayQueue::add(Duration delay) {
  std::lock_guard lock(m_);
  left_.push_back(delay);
}

std::size_t DelayQueue::advance(Duration dt) {
  std::lock_guard lock(m_);
  std::size_t due = 0;
  for (auto it = left_.begin(); it != left_.end();) {
    *it -= dt;
    if (*it <= Duration{0}) {
      ++due;
      it = left_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

void DelayQueue::clear() {
  std::lock_guard lock(m_);
  left_.clear();
}

}  // namespace kestrel::transport::detail
