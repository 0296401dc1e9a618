// World set-up: a world file into a Runner with its systems, and the handler that starts the
// plugins of models spawned at run time (sim::LoadPlugins).

#include "kestrel/world/setup.h"

namespace kestrel::world {

namespace fs = std::filesystem;

namespace {

// Resolves and starts the plugins of entities created at run time: all of them or none.
void load_plugins(sim::Runner& runner, const ResolveOptions& options,
                  const sim::LoadPlugins& request) {
  request.result->handled = true;
  Findings findings;
  ResolveOptions strict = options;
  strict.strict = true;  // a spawned model runs with every system it declares, or not at all
  auto planned = plan_plugins(request.plugins, runner.registry(), strict, findings);
  for (const auto& f : findings.items()) {
    if (f.severity == sdf::Severity::kError) {
      request.result->error = sdf::format_finding(f);
      return;
    }
  }
  std::vector<sim::NewSystem> systems;
  for (auto& p : planned) {
    systems.push_back({std::move(p.system), p.entity, p.config, p.name, p.origin});
  }
  try {
    runner.add_systems_now(std::move(systems));
  } catch (const Error& e) {
    request.result->error = e.what();
  }
}

}  // namespace

WorldSetup load_world_into_runner(const fs::path& world_file, sim::Runner& runner,
                                  const WorldSetupOptions& options) {
  WorldSetup setup;
  auto& reg = runner.registry();
  setup.description = sdf::load_world_file(world_file, reg, runner.world(), options.load);
  setup.findings = setup.description.findings;
  ResolveOptions ro = options.resolve;
  ro.strict = ro.strict || options.strict;
  std::vector<PlannedSystem> planned;
  if (options.add_systems) {
    planned =
        plan_systems(setup.description, runner.world(), reg, ro, setup.findings, &setup.missing);
  }
  if (options.strict) setup.findings.promote_warnings();

  std::string errors;
  std::size_t n = 0;
  // Warnings are returned, not logged: the caller prints them once (`kestrel run` and `check`
  // printed each twice when this logged them too).
  for (const auto& f : setup.findings.items()) {
    if (f.severity == sdf::Severity::kError) {
      errors += "\n  " + sdf::format_finding(f);
      ++n;
    }
  }
  if (n > 0) {
    throw Error(world_file.string(), "the world has " + std::to_string(n) + " error" +
                                         (n == 1 ? "" : "s") + " (run `kestrel check " +
                                         world_file.string() + "` for details):" + errors);
  }
  // Before configure, so systems and the first step already see the world's settings.
  auto run_options = runner.options();
  run_options.world_name = setup.description.name;
  if (options.apply_physics && setup.description.physics_declared) {
    run_options.step_size = setup.description.physics.max_step_size;
    run_options.real_time_factor = setup.description.physics.real_time_factor;
  }
  runner.set_options(run_options);
  for (auto& s : planned) {
    setup.systems.push_back({s.name, s.source, s.origin});
    runner.add_system(std::move(s.system), s.entity, s.config, s.name, s.origin);
  }
  if (!options.add_systems) return setup;
  runner.events().subscribe_for_life<sim::LoadPlugins>(
      [&runner, resolve = ro](const sim::LoadPlugins& request) {
        load_plugins(runner, resolve, request);
      });
  return setup;
}

}  // namespace kestrel::world
