#pragma once
/// @file The interface an external system library exports (see system_plugin.h for writing one).
/// The host includes only this header: including ignition-plugin's Register.hh in the host
/// would make its registration hook shadow the plugins' own.

#include <memory>

#include "kestrel/system.h"

namespace kestrel {

/// What an external library exports: a factory of system instances.
class SystemFactory {
 public:
  virtual ~SystemFactory() = default;
  virtual std::unique_ptr<System> create() const = 0;
};

/// The factory KESTREL_ADD_SYSTEM registers for system class T.
template <class T>
class SystemFactoryFor : public SystemFactory {
 public:
  std::unique_ptr<System> create() const override { return std::make_unique<T>(); }
};

}  // namespace kestrel
