#pragma once
/// @file Dense per-type component storage (a paged sparse set). Used through Registry; the
/// types here are public only because Registry's templates need them.
///
/// Layout: `sparse_` maps an entity id to a slot; `dense_` holds the entity of each slot;
/// component values live in fixed-size pages that are never moved or freed while their slot is
/// in use, so growth never moves a component. A removed component leaves a tombstone in its slot
/// (the entity id with kTombstone set) until Pool::compact runs at the end of the step; compaction
/// is stable, so iteration order is insertion order.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kestrel/core/error.h"
#include "kestrel/ecs/entity.h"

namespace kestrel::ecs {

/// Optional serialization hook: specialise for a component type to give it a stable name and a
/// byte encoding (used by logging and network state). Example:
/// @code
/// template <> struct ComponentSerializer<MyComp> {
///   static constexpr std::string_view kName = "my.MyComp";
///   static void write(const MyComp& c, std::string& out);
///   static MyComp read(std::string_view bytes);  // throws kestrel::Error on malformed bytes
/// };
/// @endcode
template <class T>
struct ComponentSerializer;

template <class T>
concept Serializable = requires(const T& c, std::string& out, std::string_view in) {
  { ComponentSerializer<T>::kName } -> std::convertible_to<std::string_view>;
  ComponentSerializer<T>::write(c, out);
  { ComponentSerializer<T>::read(in) } -> std::same_as<T>;
};

namespace detail {

/// A process-wide small integer per component type, assigned on first use.
std::size_t next_type_index();
template <class T>
std::size_t type_index() {
  static const std::size_t index = next_type_index();
  return index;
}

inline constexpr Entity kTombstone = Entity{1} << 63;
inline constexpr std::size_t kPoolPage = 1024;  // components per page
inline constexpr std::uint32_t kNoSlot = UINT32_MAX;

/// Entity id → slot, in pages of 4096 that are allocated on first use and freed when empty.
class SparseIndex {
 public:
  std::uint32_t find(Entity e) const {
    const auto page = static_cast<std::size_t>(e >> kShift);
    if (page >= pages_.size() || !pages_[page]) return kNoSlot;
    return pages_[page]->slots[e & kMask];
  }
  void set(Entity e, std::uint32_t slot);
  void erase(Entity e);
  void clear() { pages_.clear(); }

 private:
  static constexpr int kShift = 12;
  static constexpr Entity kMask = (Entity{1} << kShift) - 1;
  struct Page {
    std::uint32_t slots[std::size_t{1} << kShift];
    std::uint32_t used = 0;
  };
  std::vector<std::unique_ptr<Page>> pages_;
};

}  // namespace detail

class PoolBase;

namespace detail {
/// What a registry's pools share: a registry-wide layout epoch and the pools that have work for
/// the next end_step (so that end_step visits those only, not every component type).
struct PoolHub {
  std::uint64_t epoch = 0;
  std::vector<PoolBase*> dirty;
};
}  // namespace detail

/// Snapshot of one pool; opaque outside Pool.
struct PoolSnapshot {
  virtual ~PoolSnapshot() = default;
  std::vector<Entity> entities;  ///< live entities in slot order
};

/// Type-erased part of a component pool.
class PoolBase {
 public:
  explicit PoolBase(std::string_view type_name) : type_name_(type_name) {}
  virtual ~PoolBase() = default;
  PoolBase(const PoolBase&) = delete;
  PoolBase& operator=(const PoolBase&) = delete;

  std::string_view type_name() const { return type_name_; }
  /// Live components (tombstones excluded).
  std::size_t size() const { return dense_.size() - tombstones_; }
  /// Slots including tombstones; the bound for index-based iteration.
  std::size_t slots() const { return dense_.size(); }
  /// The entity in a slot, with detail::kTombstone set when its component was removed this step.
  Entity entity_at(std::size_t slot) const { return dense_[slot]; }
  std::uint32_t slot_of(Entity e) const { return sparse_.find(e); }
  bool contains(Entity e) const { return sparse_.find(e) != detail::kNoSlot; }
  std::size_t tombstones() const { return tombstones_; }
  /// Changes whenever the slot layout changes (add, remove, compact, clear, rebuild).
  std::uint64_t layout_generation() const { return generation_; }
  /// Joins a registry's hub (once, at creation): layout changes then also advance the hub's
  /// epoch, and the pool lists itself in hub->dirty when it gets work for compact().
  void attach(detail::PoolHub* hub) { hub_ = hub; }
  /// For the hub's owner: the pool is no longer in hub->dirty.
  void unlist() { listed_ = false; }
  /// True if slots [begin, end) hold the same entities here as in `other` (no tombstones).
  bool same_slots(const PoolBase& other, std::size_t begin, std::size_t end) const;

  /// Removes e's component (a tombstone until compact()). Returns false if e had none.
  bool remove(Entity e);
  /// Destroys tombstoned slots, keeping the order of the rest. Invalidates references into this
  /// pool. Also clears change marks and the removed list.
  void compact();
  /// True if compact() has anything to do (tombstones, change marks or removals this step).
  bool dirty() const { return tombstones_ != 0 || !changed_.empty() || !removed_.empty(); }

  void mark(Entity e, ComponentState s);
  ComponentState state(Entity e) const;
  const std::vector<Entity>& changed() const { return changed_; }
  const std::vector<Entity>& removed() const { return removed_; }
  void clear_marks();

  virtual std::unique_ptr<PoolSnapshot> snapshot() const = 0;
  /// Restores exactly. If the live entities equal the snapshot's in the same order, values are
  /// assigned in place and references stay valid; otherwise the pool is rebuilt.
  virtual void restore(const PoolSnapshot* snap) = 0;
  /// Destroys everything.
  virtual void clear() = 0;
  /// Adds to `to` a copy of `from`'s component if `from` has one and `to` has none; returns
  /// whether it copied (Registry::copy_components).
  virtual bool copy(Entity from, Entity to) = 0;

  /// Serialization (nullptr name when the type has no ComponentSerializer).
  virtual std::string_view serial_name() const = 0;
  virtual void serialize(Entity e, std::string& out) const = 0;
  virtual void deserialize(Entity e, std::string_view bytes) = 0;

 protected:
  std::uint32_t push_slot(Entity e);
  virtual void destroy_slot(std::size_t slot) = 0;
  virtual void move_slot(std::size_t from, std::size_t to) = 0;
  virtual void trim_pages() = 0;  // frees pages past the last slot (after compaction)

  std::string_view type_name_;
  detail::SparseIndex sparse_;
  std::vector<Entity> dense_;
  std::vector<ComponentState> state_;
  std::vector<Entity> changed_;
  std::vector<Entity> removed_;
  std::size_t tombstones_ = 0;
  std::uint64_t generation_ = 0;

  void bump_layout() {
    ++generation_;
    if (hub_) ++hub_->epoch;
  }
  void list_dirty() {
    if (hub_ && !listed_) {
      listed_ = true;
      hub_->dirty.push_back(this);
    }
  }

 private:
  detail::PoolHub* hub_ = nullptr;
  bool listed_ = false;
};

/// Storage for components of type T.
template <class T>
class Pool final : public PoolBase {
  static constexpr std::size_t kPage = detail::kPoolPage;

 public:
  Pool() : PoolBase(ecs::type_name<T>()) {}
  ~Pool() override {
    clear();
    for (T* p : pages_) ::operator delete(p, std::align_val_t{alignof(T)});
  }

  T& at(std::size_t slot) { return pages_[slot / kPage][slot % kPage]; }
  /// The first component of a page (slots page*kPage ...).
  T* page(std::size_t p) const { return pages_[p]; }
  const T& at(std::size_t slot) const { return pages_[slot / kPage][slot % kPage]; }

  template <class... Args>
  T& emplace(Entity e, Args&&... args) {
    const std::size_t slot = dense_.size();
    if (slot / kPage >= pages_.size()) {
      pages_.push_back(static_cast<T*>(
          ::operator new(sizeof(T) * kPage, std::align_val_t{alignof(T)})));
    }
    T* p = &pages_[slot / kPage][slot % kPage];
    if constexpr (std::is_aggregate_v<T>) {
      ::new (p) T{std::forward<Args>(args)...};
    } else {
      ::new (p) T(std::forward<Args>(args)...);
    }
    push_slot(e);
    return *p;
  }

  std::unique_ptr<PoolSnapshot> snapshot() const override {
    auto s = std::make_unique<Snapshot>();
    for (std::size_t i = 0; i < dense_.size(); ++i) {
      if (dense_[i] & detail::kTombstone) continue;
      s->entities.push_back(dense_[i]);
      s->values.push_back(at(i));
    }
    return s;
  }

  void restore(const PoolSnapshot* base) override {
    const auto& snap = static_cast<const Snapshot&>(*base);
    if (tombstones_ == 0 && dense_ == snap.entities) {
      for (std::size_t i = 0; i < dense_.size(); ++i) at(i) = snap.values[i];
      clear_marks();
      return;
    }
    clear();
    for (std::size_t i = 0; i < snap.entities.size(); ++i) emplace(snap.entities[i], snap.values[i]);
  }

  bool copy(Entity from, Entity to) override {
    const auto slot = slot_of(from);
    if (slot == detail::kNoSlot || contains(to)) return false;
    T value = at(slot);  // copy first: emplace may add a page
    emplace(to, std::move(value));
    return true;
  }

  void clear() override {
    for (std::size_t i = 0; i < dense_.size(); ++i) destroy_slot(i);
    dense_.clear();
    state_.clear();
    sparse_.clear();
    changed_.clear();
    removed_.clear();
    tombstones_ = 0;
    bump_layout();
  }

  std::string_view serial_name() const override {
    if constexpr (Serializable<T>) {
      return ComponentSerializer<T>::kName;
    } else {
      return {};
    }
  }
  void serialize(Entity e, std::string& out) const override {
    if constexpr (Serializable<T>) ComponentSerializer<T>::write(at(slot_of(e)), out);
    (void)e;
    (void)out;
  }
  void deserialize(Entity e, std::string_view bytes) override {
    if constexpr (Serializable<T>) {
      T value = ComponentSerializer<T>::read(bytes);
      const auto slot = slot_of(e);
      if (slot == detail::kNoSlot) {
        emplace(e, std::move(value));
      } else {
        at(slot) = std::move(value);
      }
    }
    (void)e;
    (void)bytes;
  }

 private:
  struct Snapshot final : PoolSnapshot {
    std::vector<T> values;
  };
  // A tombstoned slot still holds a live T (references stay valid until compact()).
  void destroy_slot(std::size_t slot) override { at(slot).~T(); }
  void trim_pages() override {
    const std::size_t keep = (dense_.size() + kPage - 1) / kPage;
    while (pages_.size() > keep) {
      ::operator delete(pages_.back(), std::align_val_t{alignof(T)});
      pages_.pop_back();
    }
  }
  void move_slot(std::size_t from, std::size_t to) override {
    ::new (&at(to)) T(std::move(at(from)));
    at(from).~T();
  }

  std::vector<T*> pages_;
};

}  // namespace kestrel::ecs
