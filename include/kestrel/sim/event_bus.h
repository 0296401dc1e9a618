#pragma once
/// @file EventBus: typed in-process publish/subscribe between systems and the runner.
/// Delivery is synchronous, on the publisher's thread, in subscription order (deterministic).

#include <cstddef>
#include <functional>
#include <memory>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kestrel::sim {

class EventBus {
 public:
  /// Keeps a subscription alive; destroying it unsubscribes.
  class Subscription {
   public:
    Subscription() = default;
    explicit Subscription(std::shared_ptr<void> token) : token_(std::move(token)) {}

   private:
    std::shared_ptr<void> token_;
  };

  /// Subscribes to events of type E. The handler runs until the Subscription is destroyed.
  template <class E>
  [[nodiscard]] Subscription subscribe(std::function<void(const E&)> handler) {
    auto h = std::make_shared<std::function<void(const E&)>>(std::move(handler));
    handlers_[std::type_index(typeid(E))].push_back(h);
    return Subscription(h);
  }

  /// Subscribes for the life of the bus (its owner's life: a Runner's bus lives as long as the
  /// Runner), for handlers that belong to the world rather than to a system.
  template <class E>
  void subscribe_for_life(std::function<void(const E&)> handler) {
    auto h = std::make_shared<std::function<void(const E&)>>(std::move(handler));
    handlers_[std::type_index(typeid(E))].push_back(h);
    owned_.push_back(std::move(h));
  }

  /// Delivers e to every live handler of E, in subscription order. Returns how many ran.
  template <class E>
  std::size_t publish(const E& e) {
    auto it = handlers_.find(std::type_index(typeid(E)));
    if (it == handlers_.end()) return 0;
    auto& list = it->second;
    std::size_t n = 0;
    for (std::size_t i = 0; i < list.size();) {
      if (auto h = list[i].lock()) {
        (*std::static_pointer_cast<std::function<void(const E&)>>(h))(e);
        ++n;
        ++i;
      } else {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    return n;
  }

 private:
  std::unordered_map<std::type_index, std::vector<std::weak_ptr<void>>> handlers_;
  std::vector<std::shared_ptr<void>> owned_;  // subscribe_for_life handlers
};

}  // namespace kestrel::sim
