#include "kestrel/ecs/pool.h"

#include <algorithm>
#include <atomic>

namespace kestrel::ecs {
namespace detail {

std::size_t next_type_index() {
  static std::atomic<std::size_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void SparseIndex::set(Entity e, std::uint32_t slot) {
  const auto page = static_cast<std::size_t>(e >> kShift);
  if (page >= pages_.size()) pages_.resize(page + 1);
  auto& p = pages_[page];
  if (!p) {
    p = std::make_unique<Page>();
    std::fill(std::begin(p->slots), std::end(p->slots), kNoSlot);
  }
  if (p->slots[e & kMask] == kNoSlot) ++p->used;
  p->slots[e & kMask] = slot;
}

void SparseIndex::erase(Entity e) {
  const auto page = static_cast<std::size_t>(e >> kShift);
  if (page >= pages_.size() || !pages_[page]) return;
  auto& p = pages_[page];
  if (p->slots[e & kMask] == kNoSlot) return;
  p->slots[e & kMask] = kNoSlot;
  if (--p->used == 0) p.reset();  // never-reused ids: an emptied page is never needed again
}

}  // namespace detail

std::uint32_t PoolBase::push_slot(Entity e) {
  const auto slot = static_cast<std::uint32_t>(dense_.size());
  KESTREL_DEMAND(slot != detail::kNoSlot);
  bump_layout();
  dense_.push_back(e);
  state_.push_back(ComponentState::kNoChange);
  sparse_.set(e, slot);
  return slot;
}

bool PoolBase::same_slots(const PoolBase& other, std::size_t begin, std::size_t end) const {
  if (this == &other) return true;
  if (end > dense_.size() || end > other.dense_.size()) return false;
  // A tombstone here never equals a live entity there, so the check also excludes tombstones
  // (the driver's own tombstones are skipped by the caller).
  return std::equal(dense_.begin() + static_cast<std::ptrdiff_t>(begin),
                    dense_.begin() + static_cast<std::ptrdiff_t>(end),
                    other.dense_.begin() + static_cast<std::ptrdiff_t>(begin));
}

bool PoolBase::remove(Entity e) {
  const auto slot = sparse_.find(e);
  if (slot == detail::kNoSlot) return false;
  sparse_.erase(e);
  bump_layout();
  list_dirty();
  dense_[slot] |= detail::kTombstone;
  ++tombstones_;
  removed_.push_back(e);
  return true;
}

void PoolBase::compact() {
  if (tombstones_ != 0) {
    bump_layout();
    std::size_t out = 0;
    for (std::size_t in = 0; in < dense_.size(); ++in) {
      if (dense_[in] & detail::kTombstone) {
        destroy_slot(in);
        continue;
      }
      if (in != out) {
        move_slot(in, out);
        dense_[out] = dense_[in];
        sparse_.set(dense_[out], static_cast<std::uint32_t>(out));
      }
      ++out;
    }
    dense_.resize(out);
    state_.assign(out, ComponentState::kNoChange);
    tombstones_ = 0;
    trim_pages();
  }
  clear_marks();
}

void PoolBase::mark(Entity e, ComponentState s) {
  const auto slot = sparse_.find(e);
  if (slot == detail::kNoSlot || s == ComponentState::kNoChange) return;
  auto& cur = state_[slot];
  if (cur == ComponentState::kNoChange) {
    changed_.push_back(e);
    list_dirty();
  }
  if (static_cast<int>(s) > static_cast<int>(cur)) cur = s;
}

ComponentState PoolBase::state(Entity e) const {
  const auto slot = sparse_.find(e);
  return slot == detail::kNoSlot ? ComponentState::kNoChange : state_[slot];
}

void PoolBase::clear_marks() {
  for (Entity e : changed_) {
    const auto slot = sparse_.find(e);
    if (slot != detail::kNoSlot) state_[slot] = ComponentState::kNoChange;
  }
  changed_.clear();
  removed_.clear();
}

}  // namespace kestrel::ecs
