// Real gamepad drivers as test hardware: every emulated controller (`haptics emulate`) bound by the kernel's own
// driver, probed, played and unplugged, with what its motors received decoded from the driver's reports.
import AHAPFiles
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Logging

enum EmulationSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "emulation", requires: [.uhid],
        // The rumble pads' tests; the PID joystick (no motors) has its own (EmulationSuite+PID.swift).
        tests: EmulatedModel.allCases.filter(\.hasRumbleMotors).flatMap { model in
            [
                KernelTest(name: "emulation/\(model.rawValue)/bound-by-\(model.modules)-probe-agrees-with-evtest") {
                    try await boundAndProbed(model)
                },
                KernelTest(name: "emulation/\(model.rawValue)/assets-follow-the-plan-and-end-at-rest") {
                    try await StallWitness.againAfterAGuestStall { try await assetsFollowThePlan(model) }
                },
                KernelTest(name: "emulation/\(model.rawValue)/unplug-replug-cycles-mid-pattern") {
                    try await unplugReplugCycles(model)
                },
            ]
        } + [
            KernelTest(name: "emulation/cli/sigterm-removes-the-controller-and-keeps-its-record") {
                try await cliRemovesTheControllerOnSigterm()
            },
            KernelTest(name: "emulation/dualsense-bt/hidraw-haptics-reports-play-on-the-voice-coils") {
                try await StallWitness.againAfterAGuestStall(hapticsReportsPlayOnTheVoiceCoils)
            },
            KernelTest(name: "emulation/cli/a-second-dualsense-with-the-same-address-is-refused-naming-the-address") {
                try await sameAddressRefused()
            },
            KernelTest(name: "emulation/cli/dualsense-bt-haptics-wav-holds-what-the-coils-played") {
                try await cliWritesTheCoilsWAV()
            },
            KernelTest(name: "emulation/switch-pro/hidraw-hd-rumble-bands-reach-the-record") {
                try await hdRumbleBandsReachTheRecord()
            },
            KernelTest(name: "emulation/xbox-one-bt/hidraw-trigger-report-plays-for-its-duration") {
                try await triggerReportPlaysForItsDuration()
            },
        ] + pidTests)

    /// Binding includes the driver's probe requests, under emulation: generous, only a hang exceeds it.
    static let bindTimeout = 20.0

    static func logger() -> Logger {
        var logger = Logger(label: "kernel-tests.emulation")
        logger.logLevel = .warning
        return logger
    }

    /// A started, bound controller; `body` runs with it and it is removed afterwards whatever happens.
    static func withController<T>(
        _ model: EmulatedModel, _ body: (any EmulatedDevice, EmulatedDeviceNodes) async throws -> T
    ) async throws -> T {
        let device: any EmulatedDevice
        do {
            device = try model.start(logger: logger())
        } catch {
            if case .transportMissing = error {
                throw TestSkip(model.overUSBGadget ? .gadget : .uhid, "\(error)")
            }
            throw TestFailure(reason: "\(error)")
        }
        defer { device.destroy() }
        let nodes: EmulatedDeviceNodes
        do { nodes = try device.waitUntilBound(timeout: bindTimeout) } catch {
            throw TestFailure(reason: "\(error)")
        }
        return try await body(device, nodes)
    }

    // MARK: Bound, and probed as evtest sees it

    static func boundAndProbed(_ model: EmulatedModel) async throws {
        try await withController(model) { _, nodes in
            try requireEqual(nodes.driver, model.driver, "driver bound in sysfs")
            let device = try DeviceSuite.probe(nodes.rumbleNode)
            try requireEqual(device.driver, model.driver, "driver in probe --json")
            try require(
                device.forceFeedback.effects.contains("rumble"), "no rumble in probe: \(device.forceFeedback.effects)")
            try require(device.isGamepad, "the \(model.rawValue) is not called a gamepad (\(device.gamepadEvidence))")
            try requireEqual(
                device.forceFeedback.maxEffects, try DeviceSuite.kernelEffectSlots(nodes.rumbleNode),
                "maxEffects vs EVIOCGEFFECTS")
            guard onPath("evtest") else { throw TestSkip(.evtest, "evtest is not installed (apt-get install evtest)") }
            let evtestBits = VirtualPadSuite.evtestCodes(
                try VirtualPadSuite.evtestListing(nodes.rumbleNode), eventType: "EV_FF")
            try requireEqual(
                device.forceFeedbackCodes.sorted(), evtestBits.sorted(), "FF bits of probe --json vs evtest")
            print(
                "    \(nodes.rumbleNode) \"\(device.name)\" driver \(nodes.driver), FF \(device.forceFeedback.effects.joined(separator: ",")), \(device.forceFeedback.maxEffects ?? 0) slots"
            )
        }
    }

    // MARK: What the driver sent follows the planner

    static let assets = ["thud", "detent", "error", "heartbeat", "capacitor_charge"]

    static func assetsFollowThePlan(_ model: EmulatedModel) async throws {
        try await withController(model) { device, nodes in
            var summary: [String] = []
            var profiles: Set<String> = []
            // On the Switch Pro Controller the engine plans on the pad's frames (`switch-frames`), whose commands
            // depend on where the frames fall; the write-budget planner it falls back to is the one checked here
            // (the frames are checked by `hd/switch-pro/ff-rumble-changes-scheduled-ahead-reach-the-pad-on-their-time`).
            let profileOption = model == .switchPro ? ["--profile", RenderProfile.switchPro.name] : []
            for asset in assets {
                for attempt in 1...3 {
                    do {
                        let (profile, line) = try await playFollowingThePlan(
                            asset, model, device, nodes, profileOption: profileOption)
                        profiles.insert(profile)
                        summary.append(line)
                        break
                    } catch let late as LateWrite {
                        guard attempt < 3 else {
                            throw TestFailure(reason: "\(late); the third play in a row to write late so")
                        }
                        print("    \(late): played again")
                    }
                }
            }
            if model == .switchPro { summary.append(try await assetsOnFrames(device, nodes)) }
            summary.append(try await stoppedMidPattern(device, nodes))
            print("    profile \(profiles.sorted().joined(separator: ",")): " + summary.joined(separator: "; "))
        }
    }

    /// A level off the plan that came after a write the engine itself reported late (`haptics play`'s `late`
    /// event: a level its thread slept through whole, written when it woke), from which it planned the rest again.
    struct LateWrite: Error, CustomStringConvertible {
        let failure: TimingFailure
        let late: [String]
        var description: String {
            "\(failure.reason); after the engine's late writes (\(late.joined(separator: ", ")))"
        }
    }

    /// `haptics play ASSET` on the controller, with what the driver sent checked against the planner (`follow`):
    /// the profile the CLI chose, and a summary. A level off the plan is `LateWrite` when it reached the pad after a
    /// write the CLI reported late, whose levels after it are planned again from that write (docs/engine.md), and
    /// the asset is played again; at most twice, so that late writes on every run still fail the test.
    static func playFollowingThePlan(
        _ asset: String, _ model: EmulatedModel, _ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes,
        profileOption: [String]
    ) async throws -> (profile: String, summary: String) {
        let before = device.records().count
        let output = try AppSuite.runCLI(
            ["play", asset, "--device", nodes.rumbleNode, "--json"] + profileOption)
        let events = AppSuite.events(output)
        guard let profileName = events.first(where: { $0["event"] == "started" })?["profile"],
            let profile = RenderProfile.named(profileName)
        else { throw TestFailure(reason: "\(asset): no started event with a profile:\n\(output)") }
        try require(events.last?["event"] == "finished", "\(asset) did not finish:\n\(output)")
        // The driver's last report (ff-memless's stop when the CLI closes the device) may trail the CLI, and a driver
        // that queues a frame per call (hid-nintendo) may still be sending a backlog after a rest that came before
        // the pattern's end: at rest, then nothing more for 100 ms, so that no frame of this play reaches the next.
        try await waitForOutputs(device, after: before, "\(asset): the final report at rest") { outputs in
            outputs.last.map { $0.strong == 0 && $0.weak == 0 && monotonicSeconds() - $0.time.seconds >= 0.1 }
                ?? false
        }
        // hid-playstation's empty reruns carry no level (`splitOffReruns`).
        let outputs = try splitOffReruns(device.records(), after: before).levels
        let pattern = try HapticPattern(contentsOf: URL(fileURLWithPath: "Haptics/\(asset).ahap"))
        let planned = DeviceCommandPlanner(profile: profile).commands(
            for: PatternRenderer(profile: profile).render(pattern))
        // The engine's writes of levels its thread slept through: when each went out (the engine's clock is
        // the monotonic one, as the pad's records are).
        let late = events.filter { $0["event"] == "late" }.compactMap { event in
            event["written"].flatMap(Double.init).map { (written: $0, ms: event["ms"] ?? "?") }
        }
        do {
            let (arrived, levels) = try follow(
                outputs, planned, step: model.motorStep, interval: profile.minimumUpdateInterval,
                renewal: .forProfile(profile), asset: asset)
            return (profileName, "\(asset) \(outputs.count) reports, \(arrived) of \(levels) planned levels")
        } catch let failure as TimingFailure {
            guard let offPlan = failure.window?.upperBound, late.contains(where: { $0.written <= offPlan })
            else { throw failure }
            throw LateWrite(failure: failure, late: late.map { "\($0.ms) ms late" })
        }
    }

    /// The same assets as `haptics play` plays them by default on the Switch Pro Controller, on the pad's frames:
    /// each drives the motors and ends at rest.
    static func assetsOnFrames(_ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes) async throws -> String {
        var reports: [Int] = []
        for asset in assets {
            let before = device.records().count
            let launched = monotonicSeconds()
            let output = try AppSuite.runCLI(["play", asset, "--device", nodes.rumbleNode, "--json"])
            let run = launched...monotonicSeconds()
            let events = AppSuite.events(output)
            let profile = events.first(where: { $0["event"] == "started" })?["profile"]
            if let profile, profile == RenderProfile.switchPro.name {
                // The engine found no certain frames in the pad's reports. The emulated pad's reports come from a
                // thread of this process: a guest that stood still for a report period sends several together,
                // which read as one. The engine chose before its first output that moves a motor reached the pad: a
                // stall after that explains nothing. (Not its first output: one at rest reaches the pad 3 to 25 ms
                // after the launch, hid-nintendo sending the rest of what played before again, so that window missed
                // the 0.8 s the CLI takes to open the pad and choose.)
                let firstOutput = device.records().dropFirst(before).first {
                    $0.event == .output && (($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0)
                }?.time.seconds
                let chosen = run.lowerBound...max(run.lowerBound, min(firstOutput ?? run.upperBound, run.upperBound))
                let late = device.inputReports().filter { chosen.contains($0.sent.seconds) }.map {
                    Double($0.sent.microseconds - $0.due.microseconds) / 1000
                }
                throw TimingFailure(
                    reason: "\(asset): haptics play planned without the pad's frames (\(profile), not "
                        + "\(RenderProfile.switchProOnFrames.name)); the emulated pad sent \(late.count) reports "
                        + "before its first output, the latest \(AudioSuite.tenths(late.max() ?? 0)) ms after it "
                        + "was due",
                    explainingStall: FramePacing.reportPeriods.upperBound * 1000, window: chosen)
            }
            try requireEqual(profile, RenderProfile.switchProOnFrames.name, "\(asset): the profile haptics play chose")
            try require(events.last?["event"] == "finished", "\(asset) did not finish:\n\(output)")
            try await waitForOutputs(device, after: before, "\(asset) on frames: the final report at rest") { outputs in
                outputs.last.map { $0.strong == 0 && $0.weak == 0 } ?? false
            }
            let outputs = device.records().dropFirst(before).filter { $0.event == .output }
            try require(
                outputs.contains { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 },
                "\(asset) on frames: the motors were never driven")
            reports.append(outputs.count)
        }
        return "on frames (switch-frames): every asset driven and at rest after \(reports) reports"
    }

    /// `haptics play` of a looped pattern interrupted (SIGINT) while the motors run: the CLI stops the engine,
    /// and the last report leaves the motors at rest.
    static func stoppedMidPattern(_ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes) async throws -> String {
        let before = device.records().count
        // capacitor_charge drives the motors all through (heartbeat has rests between its beats).
        let play = try Subprocess([
            projectBinary("haptics"), "play", "capacitor_charge", "--loop", "0", "--device", nodes.rumbleNode,
        ])
        try await waitForOutputs(device, after: before, "the looped pattern on the motors") { outputs in
            outputs.contains { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 }
        }
        play.signal(SIGINT)
        let status = play.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        // 128 + SIGINT, as a shell reports Ctrl-C (docs/cli.md).
        try require(status == 130, "haptics play exited \(status) on SIGINT, not 130:\n\(play.text)")
        try await waitForOutputs(device, after: before, "the report at rest after the stop") { outputs in
            outputs.last.map { $0.strong == 0 && $0.weak == 0 } ?? false
        }
        let count = device.records().dropFirst(before).filter { $0.event == .output }.count
        return "stopped mid-loop: at rest after \(count) reports"
    }

    /// Checks that the distinct levels the driver sent are planned commands in the planned order (each within one
    /// step of the controller's scale), that the motors were driven, and that the last report leaves them at
    /// rest. Not every planned command has to arrive: drivers coalesce (xpad overwrites its pending packet while
    /// one is in flight, hid-playstation and hid-sony send the latest levels from a work item), so a command
    /// held for one update interval can be replaced before it reaches the wire; which ones depends on timing.
    /// A level the engine's thread slept through whole is written when it wakes and the rest is planned again from
    /// that write (docs/engine.md), so a level that is no planned command is a failure of timing alone when the
    /// whole guest stood still for a write interval (`interval`, seconds) or more between the level before it and
    /// it: the test then runs again (`StallWitness.againAfterAGuestStall`); or when it came after such a write of
    /// the engine's, which `haptics play` reports (`playFollowingThePlan`): the asset is then played again. A rest
    /// before the plan's end (only its closing rest matches it, and levels follow) is the kernel's end of an effect
    /// whose renewal came too late: explained by a stall of the renewal window's margin (`renewal`) from a window
    /// and a frame before it arrived.
    /// Returns how many distinct levels arrived and how many were planned.
    static func follow(
        _ outputs: [PadRecord], _ planned: [RumbleCommand], step: Double, interval: Double,
        renewal: OutputTiming.Renewal, asset: String
    ) throws -> (Int, Int) {
        let tolerance = step + 1e-9
        // Each change of level on the device and when it arrived.
        let changes = outputs.reduce(into: [(level: MotorMagnitudes, time: Double)]()) { result, record in
            let level = MotorMagnitudes(strong: record.strong ?? 0, weak: record.weak ?? 0)
            if result.last?.level != level { result.append((level, record.time.seconds)) }
        }
        let levels = changes.map(\.level)
        // The device starts at rest, and the plan ends there.
        let plan = distinct([MotorMagnitudes(strong: 0, weak: 0)] + planned.map(\.levels))
        let near = { (a: MotorMagnitudes, b: MotorMagnitudes) in
            abs(a.strong - b.strong) <= tolerance && abs(a.weak - b.weak) <= tolerance
        }
        var cursor = 0
        for (index, level) in levels.enumerated() {
            let since = index > 0 ? changes[index - 1].time : changes[index].time - interval
            let found = plan[cursor...].firstIndex(where: { near($0, level) })
            // A rest that only the plan's closing levels match (at rest within a step), with driven levels after it:
            // the motors stopped before the plan's end. ff-memless ends an effect whose renewal did not come within
            // its replay window: the renewal was due up to a window (and a driver's frame, 30 ms) before the rest
            // arrived, and the guest standing still for the window's margin then explains it.
            let rest = MotorMagnitudes(strong: 0, weak: 0)
            if let found, level == rest, plan[found...].allSatisfy({ near($0, rest) }),
                levels[(index + 1)...].contains(where: { !near($0, rest) })
            {
                let arrived = changes[index].time
                throw TimingFailure(
                    reason: "\(asset): level #\(index) on the device is a rest before the plan's end, levels after it; "
                        + "device: \(levels.prefix(12))",
                    explainingStall: renewal.expiryMarginSeconds * 1000,
                    window: (arrived - renewal.windowSeconds - 0.030)...arrived)
            }
            guard let found else {
                throw TimingFailure(
                    reason:
                        "\(asset): level #\(index) on the device, \(level), is no planned command at or after #\(cursor) "
                        + "(\(plan[cursor...].prefix(4).map { "\($0)" }.joined(separator: ", "))...); device: \(levels.prefix(12))",
                    explainingStall: interval * 1000, window: since...changes[index].time)
            }
            cursor = found
        }
        try require(
            levels.contains { $0.strong > 0 || $0.weak > 0 }, "\(asset): the motors were never driven: \(levels)")
        try require(
            levels.last.map { $0.strong == 0 && $0.weak == 0 } ?? false,
            "\(asset): the motors were left at \(String(describing: levels.last))")
        return (levels.count, plan.count)
    }

    /// Splits hid-playstation's reports into those that carry motor levels and the empty reruns of its output
    /// worker. The driver sets the vibration flags on every report that carries a level ff-memless gave it; a
    /// report with no valid flag at all comes from a second run of the worker, queued by a play that arrived
    /// while the first run was under way and already sent by it (ff-memless plays a newly started endless effect
    /// again one jiffy later, so this happens when the worker is slow). The emulated pad reads a report without
    /// flags as SDL's stop, rumble emulation off: it carries no level of ff-memless, so the tests leave it out of
    /// the levels they check, and it must follow a report with levels within ff-memless's timer step, as a rerun
    /// does. The outputs returned are those from record `index` on; the one before each is found in all of them.
    static func splitOffReruns(_ records: [PadRecord], after index: Int = 0) throws -> (
        levels: [PadRecord], reruns: [PadRecord]
    ) {
        let step = FFMemlessSuite.timerStepMicroseconds
        var levels: [PadRecord] = []
        var reruns: [PadRecord] = []
        // The output before each, from the whole record: a rerun can trail its report across `index`.
        var previous: PadRecord?
        for (position, record) in records.enumerated() where record.event == .output {
            defer { previous = record }
            let counted = position >= index
            guard record.mode == DualSense.rumbleOffMode else {
                if counted { levels.append(record) }
                continue
            }
            guard let previous, previous.mode != DualSense.rumbleOffMode,
                record.time.microseconds - previous.time.microseconds <= step
            else {
                guard counted else { continue }
                throw TestFailure(
                    reason: "hid-playstation sent a report with no valid flag at \(record.time) that follows no report "
                        + "of levels within \(step / 1000) ms: the driver turned the rumble off by itself; its "
                        + "reports: \(records.filter { $0.event == .output }.map { "\($0.mode ?? "-")@\($0.time)" })")
            }
            if counted { reruns.append(record) }
        }
        return (levels, reruns)
    }

    static func distinct(_ levels: [MotorMagnitudes]) -> [MotorMagnitudes] {
        levels.reduce(into: []) { result, level in if result.last != level { result.append(level) } }
    }

    /// Waits until the outputs recorded after `before` satisfy `condition` (hang guard only).
    static func waitForOutputs(
        _ device: any EmulatedDevice, after before: Int, _ what: String, _ condition: ([PadRecord]) -> Bool
    ) async throws {
        let deadline = monotonicSeconds() + VirtualPadSuite.hangGuardSeconds
        while !condition(device.records().dropFirst(before).filter { $0.event == .output }) {
            try require(monotonicSeconds() < deadline, "timed out waiting for \(what)")
            try await Task.sleep(for: .milliseconds(AppSuite.pollMilliseconds))
        }
    }

    // MARK: Unplugged and plugged back in, mid-pattern

    /// One cycle first, unmeasured: the runtime and the libraries open descriptors of their own the first time
    /// (a timer, udev's monitor) and keep them; then the measured cycles.
    static func unplugReplugCycles(_ model: EmulatedModel) async throws {
        try await EngineSuite.warmUpRuntime()
        _ = try await cycles(model, count: 1, checkingDescriptors: false)
        let count = Repetitions.controllerCycles
        let (free, slots) = try await cycles(model, count: count)
        try requireEqual(free, slots, "effect slots free once the engine stopped on the re-plugged \(model.rawValue)")
        print(
            "    \(count) cycles: each stopped (device removed) and reset, no descriptor left open; then played on and "
                + "stopped with it plugged in: \(free) of \(slots) slots free")
    }

    /// An engine playing a looped heartbeat on the controller, which is unplugged mid-pattern and plugged back
    /// in `count` times. Fails on a missing stop or reset or a descriptor left open. Then the controller is plugged
    /// back in, the engine started on it, played on and stopped with it still there: returns the effect slots then
    /// free on that same controller (a controller plugged in anew has every slot free, whatever the engine left),
    /// and how many it has.
    static func cycles(_ model: EmulatedModel, count: Int, checkingDescriptors: Bool = true) async throws -> (
        free: Int, slots: Int
    ) {
        try await withController(model) { device, nodes in
            let id = try AppSuite.stableID(of: nodes.rumbleNode)
            // Taken with the controller's own descriptors open; they close with its first unplug.
            let baseline = openDescriptors()
            var options = HapticEngineOptions()
            options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
            // The PID joystick, a force-feedback device, is played only when the engine may drive one.
            options.allowsForceDevices = !model.hasRumbleMotors
            let engine = HapticEngine(output: .device(.id(id)), options: options, logger: logger())
            let events = EngineSuite.Events(engine)
            do { try engine.start() } catch { throw TestFailure(reason: "starting the engine on \(id): \(error)") }
            let pattern = try HapticPattern(contentsOf: URL(fileURLWithPath: "Haptics/heartbeat.ahap"))
            /// The heartbeat looped until the controller shows it (its motors, or a PID effect started).
            func playHeartbeat(_ what: String) async throws {
                let before = device.records().count
                let player = try engine.makeAdvancedPlayer(with: pattern)
                player.loopEnabled = true
                try player.start(atTime: 0)
                try await waitForOutputs(device, after: before, what) { outputs in
                    outputs.contains { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 || $0.pid?.operation == .start }
                }
            }
            for cycle in 0..<count {
                if cycle > 0 {
                    try device.replug()
                    try await events.wait(for: .reset, "cycle \(cycle): plugged back in")
                }
                try await playHeartbeat("cycle \(cycle): the heartbeat on the device")
                let removed = events.all.filter { $0 == .stopped(.gameControllerDisconnect) }.count
                try device.unplug()
                if events.all.filter({ $0 == .stopped(.gameControllerDisconnect) }).count == removed {
                    try await events.wait(
                        for: .stopped(.gameControllerDisconnect), "cycle \(cycle): unplugged mid-pattern")
                }
            }
            engine.stop()
            // Unplugged now: a uhid controller's own descriptors are closed, so whatever is left is the engine's.
            if checkingDescriptors {
                try await EngineSuite.waitForDescriptors(baseline, "after \(count) cycles and stop")
            }
            try requireEqual(events.all.filter { $0 == .reset }.count, count - 1, "resets")
            try device.replug()
            let node = try device.waitUntilBound(timeout: bindTimeout).rumbleNode
            do { try engine.start() } catch {
                throw TestFailure(reason: "starting the engine again on \(id): \(error)")
            }
            try await playHeartbeat("the heartbeat on the controller plugged back in")
            engine.stop()
            // A PID device frees its blocks as hid-pidff's queued Block Free reports reach it.
            if !model.hasRumbleMotors { try await PIDSuite.waitForEveryBlockFree(device) }
            return (try freeEffectSlots(node), try DeviceSuite.kernelEffectSlots(node))
        }
    }

    // MARK: The command

    /// `haptics emulate dualsense --record FILE`, as a user runs it: it names the rumble node once the driver
    /// bound the controller, `haptics play thud` on that node reaches its record file, and SIGTERM removes the
    /// controller (its node goes away) with exit status 0 and the last line `removed`.
    /// hid-playstation refuses a second DualSense with the address of one present: the second `haptics emulate`
    /// fails saying the driver is loaded but did not take it, and to give another `--uniq` (it asked whether the
    /// driver was loaded, and to `modprobe` it, until 6 December).
    static func sameAddressRefused() async throws {
        let address = "aa:bb:cc:dd:ee:0\(getpid() % 10)"
        let first = try Subprocess([projectBinary("haptics"), "emulate", "dualsense", "--uniq", address])
        defer {
            first.signal(SIGTERM)
            _ = first.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        }
        try require(
            first.read(until: { $0.contains("created dualsense") }, timeout: bindTimeout),
            "the first controller was not created:\n\(first.text)")
        let second = try Subprocess([
            projectBinary("haptics"), "emulate", "dualsense", "--uniq", address, "--bind-timeout", "1",
        ])
        try requireEqual(second.finish(timeout: VirtualPadSuite.hangGuardSeconds), 1, "status:\n\(second.text)")
        try require(
            second.text.contains("hid-playstation, is loaded but did not take it") && second.text.contains("--uniq")
                && !second.text.contains("modprobe"),
            "the refusal of a second pad with one address:\n\(second.text)")
    }

    static func cliRemovesTheControllerOnSigterm() async throws {
        let record = "/tmp/emulate-record-\(getpid()).jsonl"
        defer { unlink(record) }
        let emulator = try Subprocess([projectBinary("haptics"), "emulate", "dualsense", "--record", record])
        let created = emulator.read(
            until: { $0.contains("created dualsense") && $0.contains("\n") }, timeout: bindTimeout)
        try require(created, "haptics emulate printed no created line:\n\(emulator.text)")
        guard let line = emulator.text.split(separator: "\n").first(where: { $0.hasPrefix("created ") }),
            let node = line.split(separator: " ").first(where: { $0.hasPrefix("/dev/input/event") })
                .map({ String($0.filter { $0 != "," }) })
        else { throw TestFailure(reason: "no rumble node in: \(emulator.text)") }
        try requireEqual(try DeviceSuite.probe(node).driver, "playstation", "driver of the emulated DualSense")
        _ = try AppSuite.runCLI(["play", "thud", "--device", node])
        emulator.signal(SIGTERM)
        let status = emulator.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        try require(status == 0, "haptics emulate exited \(status) on SIGTERM:\n\(emulator.text)")
        try require(
            emulator.text.split(separator: "\n").last?.hasPrefix("removed dualsense") ?? false,
            "the last line is not 'removed dualsense':\n\(emulator.text)")
        try require(
            access(node, F_OK) != 0 || (try? DeviceSuite.probe(node))?.driver != "playstation",
            "\(node) is still the DualSense")
        let outputs = try PadRecord.decodeLines(String(contentsOfFile: record, encoding: .utf8)).filter {
            $0.event == .output
        }
        try require(outputs.contains { ($0.strong ?? 0) > 0 }, "the record has no report that drove the motors")
        try require(outputs.last.map { $0.strong == 0 && $0.weak == 0 } ?? false, "the record does not end at rest")
        try require(
            outputs.allSatisfy { $0.report?.hasPrefix("02") ?? false }, "a report in the record is not output report 2")
        print("    \(outputs.count) output records, ending at rest; the controller was removed on SIGTERM")
    }

    /// Uploads silent rumbles until the device refuses: how many slots nobody holds. The descriptor is closed
    /// afterwards, which frees them again.
    static func freeEffectSlots(_ node: String) throws -> Int {
        let device = try EventDevice(node: node, logger: logger())
        defer { device.close() }
        var held: [UploadedEffect] = []
        defer { held.removeAll() }
        while held.count < 128 {
            do {
                held.append(try device.uploadEffect(.rumble(strong: 0, weak: 0, lengthMilliseconds: 10)))
            } catch {
                break
            }
        }
        return held.count
    }
}
