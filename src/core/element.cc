#include "kestrel/core/element.h"

#include <tinyxml2.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "kestrel/core/text.h"

namespace kestrel {

struct ElementBuilder {
  static std::shared_ptr<Element> build(const tinyxml2::XMLElement* x, const std::string& file,
                                        int line_offset) {
    auto e = std::make_shared<Element>();
    e->name_ = x->Name();
    e->file_ = file;
    e->line_ = x->GetLineNum() + line_offset;
    // Text values without their surrounding whitespace.
    if (const char* t = x->GetText()) e->text_ = trim(t);
    for (auto* a = x->FirstAttribute(); a; a = a->Next()) {
      e->attributes_.emplace_back(a->Name(), a->Value());
    }
    tinyxml2::XMLPrinter printer;
    x->Accept(&printer);
    e->xml_ = printer.CStr();
    for (auto* c = x->FirstChildElement(); c; c = c->NextSiblingElement()) {
      e->children_.push_back(build(c, file, line_offset));
    }
    return e;
  }
};

std::shared_ptr<const Element> Element::parse(std::string_view xml, std::string file,
                                              int first_line) {
  tinyxml2::XMLDocument doc;
  const std::string where = (file.empty() ? "<string>" : file) + ":" + std::to_string(first_line);
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
    throw Error(where, std::string("malformed XML: ") + doc.ErrorStr());
  }
  const auto* root = doc.RootElement();
  if (!root) throw Error(where, "expected an XML element, found none");
  return ElementBuilder::build(root, file.empty() ? "<string>" : file, first_line - 1);
}

std::shared_ptr<const Element> Element::empty(std::string element_name) {
  auto e = std::make_shared<Element>();
  e->name_ = std::move(element_name);
  e->file_ = "<none>";
  e->xml_ = "<" + e->name_ + "/>";
  return e;
}

std::string Element::where() const { return file_ + ":" + std::to_string(line_); }

std::optional<std::string> Element::attribute(std::string_view key) const {
  for (const auto& [k, v] : attributes_)
    if (k == key) return v;
  return std::nullopt;
}

std::vector<std::string> Element::attribute_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : attributes_) out.push_back(k);
  return out;
}

void Element::reject_unknown_attributes(std::initializer_list<std::string_view> known) const {
  for (const auto& [k, v] : attributes_) {
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string accepted;
    for (std::string_view a : known) accepted += (accepted.empty() ? "" : ", ") + std::string(a);
    throw Error(where(), "<" + name_ + "> has unknown attribute '" + k +
                             "' (accepted: " + (accepted.empty() ? "none" : accepted) + ")");
  }
}

const Element* Element::child(std::string_view child_name) const {
  for (const auto& c : children_) {
    if (c->name_ == child_name) {
      c->read_ = true;
      return c.get();
    }
  }
  return nullptr;
}

std::vector<const Element*> Element::children(std::string_view child_name) const {
  std::vector<const Element*> out;
  for (const auto& c : children_) {
    if (c->name_ == child_name) {
      c->read_ = true;
      out.push_back(c.get());
    }
  }
  return out;
}

std::vector<const Element*> Element::unread_children() const {
  std::vector<const Element*> out;
  for (const auto& c : children_)
    if (!c->read_) out.push_back(c.get());
  return out;
}

namespace {

[[noreturn]] void bad_value(const Element& e, const char* expected) {
  throw Error(e.where(), "<" + e.name() + "> expected " + expected + ", found '" + e.text() + "'");
}

double parse_double(const Element& e, std::string_view token) {
  const std::string s(token);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) {
    bad_value(e, "a finite number");
  }
  return v;
}

std::vector<double> parse_doubles(const Element& e, std::size_t n, const char* expected) {
  std::istringstream in(e.text());
  std::vector<double> out;
  std::string tok;
  while (in >> tok) out.push_back(parse_double(e, tok));
  if (out.size() != n) bad_value(e, expected);
  return out;
}

}  // namespace

template <>
std::string Element::value<std::string>() const {
  return text_;
}

template <>
bool Element::value<bool>() const {
  if (text_ == "true" || text_ == "1") return true;
  if (text_ == "false" || text_ == "0") return false;
  bad_value(*this, "a boolean (true, false, 1 or 0)");
}

template <>
double Element::value<double>() const {
  return parse_double(*this, text_);
}

template <>
int Element::value<int>() const {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text_.c_str(), &end, 10);
  if (text_.empty() || end != text_.c_str() + text_.size() || errno == ERANGE || v < INT32_MIN ||
      v > INT32_MAX) {
    bad_value(*this, "an integer");
  }
  return static_cast<int>(v);
}

template <>
unsigned Element::value<unsigned>() const {
  const int v = value<int>();
  if (v < 0) bad_value(*this, "a non-negative integer");
  return static_cast<unsigned>(v);
}

template <>
ignition::math::Vector3d Element::value<ignition::math::Vector3d>() const {
  const auto v = parse_doubles(*this, 3, "three numbers 'x y z'");
  return {v[0], v[1], v[2]};
}

template <>
ignition::math::Pose3d Element::value<ignition::math::Pose3d>() const {
  const auto v = parse_doubles(*this, 6, "six numbers 'x y z roll pitch yaw'");
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

}  // namespace kestrel
