#pragma once
/// @file Element: a read-only XML element with its source location, handed to systems as their
/// `<plugin>` configuration (Kestrel's stand-in for sdf::ElementPtr, so that public headers
/// never include SDFormat).
///
/// Typed getters fail loudly: a missing required value or a value of the wrong type throws
/// kestrel::Error naming FILE:LINE, the element path, what was expected and what was found.
/// Every child a system reads is remembered, so the loader can report parameters nobody read
/// (usually a misspelling: `motorConstnt`) — see unread_children().

#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/error.h"

namespace kestrel {

class Element {
 public:
  /// Parses one XML element from text. `file` and `first_line` say where the text starts in
  /// its file, so locations refer to the user's file. @throws Error on malformed XML.
  static std::shared_ptr<const Element> parse(std::string_view xml, std::string file = {},
                                              int first_line = 1);
  /// An element with no children and no attributes (for systems added without a <plugin>).
  static std::shared_ptr<const Element> empty(std::string name);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  /// "world.sdf:12" (or "<string>:12").
  std::string where() const;
  /// The original XML text of this element.
  const std::string& xml() const { return xml_; }

  std::optional<std::string> attribute(std::string_view key) const;
  /// Attribute names in document order.
  std::vector<std::string> attribute_names() const;
  /// @throws Error at this element's FILE:LINE naming the first attribute not in `known` and
  /// listing the accepted ones (an element whose attributes carry data, e.g. `<fault time=..>`,
  /// must not ignore a misspelt one: `duraton="3"`). An empty `known` accepts no attribute.
  void reject_unknown_attributes(std::initializer_list<std::string_view> known) const;
  const std::vector<std::shared_ptr<const Element>>& children() const { return children_; }
  /// First child with that name, or nullptr. Marks it read.
  const Element* child(std::string_view child_name) const;
  /// All children with that name. Marks them read.
  std::vector<const Element*> children(std::string_view child_name) const;
  bool has(std::string_view child_name) const { return child(child_name) != nullptr; }

  /// Required child value. @throws Error if missing or not convertible to T.
  template <class T>
  T get(std::string_view child_name) const;
  /// Optional child value: `fallback` when absent. @throws Error if present but malformed.
  template <class T>
  T get_or(std::string_view child_name, T fallback) const;
  /// This element's own text as T. @throws Error if not convertible.
  template <class T>
  T value() const;

  /// Names (with line) of direct children that no getter has read yet.
  std::vector<const Element*> unread_children() const;

 private:
  friend struct ElementBuilder;
  std::string name_, text_, file_, xml_;
  int line_ = 0;
  std::vector<std::pair<std::string, std::string>> attributes_;
  std::vector<std::shared_ptr<const Element>> children_;
  mutable bool read_ = false;
};

// Supported T: std::string, bool, int, unsigned, double, ignition::math::Vector3d,
// ignition::math::Pose3d ("x y z roll pitch yaw", radians).
template <>
std::string Element::value<std::string>() const;
template <>
bool Element::value<bool>() const;
template <>
int Element::value<int>() const;
template <>
unsigned Element::value<unsigned>() const;
template <>
double Element::value<double>() const;
template <>
ignition::math::Vector3d Element::value<ignition::math::Vector3d>() const;
template <>
ignition::math::Pose3d Element::value<ignition::math::Pose3d>() const;

template <class T>
T Element::get(std::string_view child_name) const {
  const Element* c = child(child_name);
  if (!c) {
    throw Error(where(), "<" + name_ + "> is missing required parameter <" +
                             std::string(child_name) + ">");
  }
  return c->value<T>();
}

template <class T>
T Element::get_or(std::string_view child_name, T fallback) const {
  const Element* c = child(child_name);
  return c ? c->value<T>() : fallback;
}

}  // namespace kestrel
