// Trigger latency against SDL: call -> first output on the device, like against like. What was uploaded ahead
// against what was uploaded ahead: SDL's haptic API running an effect uploaded once before the rounds
// (`SDL_HapticRunEffect` alone), against our prepared transient, through HapticManager (`prepare(pattern:)` once,
// then `play(pattern:)` each round) and through an engine player prepared once and started each round.
// A call that goes from nothing to rumble against the same: SDL's `SDL_GameControllerRumble` against the ordinary
// `start(atTime: 0)` of a player just made with `makePlayer(with:)`. Every call runs in a process of its own, SDL's
// in sdl-peer's and ours in `haptics-bench --latency-caller`'s, none in the process that serves the pads: each
// sleeps the same quiet before its call and answers with the time it made the call. Every call, ours
// and SDL's, is made a quarter of the kernel's tick past a tick (`KernelTick`). Every round takes each path once,
// in the order of a balanced Latin square (`balancedOrder`), so that neither a slow stretch of the machine, nor a
// place in the order, nor the path run just before favours one.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import AppHaptics
import LinuxInput

enum LatencyPath: String, CaseIterable, Sendable {
    case sdlRun = "SDL_HapticRunEffect, uploaded once"
    case oursManagerPrepared = "ours, prepared transient (HapticManager)"
    case oursEnginePrepared = "ours, engine player prepared once"
    case sdlRumble = "SDL_GameControllerRumble"
    case oursStart = "ours, makePlayer + start(atTime: 0)"
    /// Not ours to hold against SDL's run but the floor under our prepared paths: the play write of an effect
    /// uploaded once, made through our lowest layer (`EffectTrigger.fire`) from our process. Measured only when
    /// asked (`--latency-floor`), and not in the closing line.
    case oursFloor = "ours, the play write alone (EffectTrigger.fire)"
    /// Not ours either, but the floor under a start through the pad's own report: report 3 at full strength for
    /// 30 ms, built once and written alone on the Xbox pad's hidraw node, as SDL's rumble call ends. Measured only
    /// with the floor, on the Xbox pad over Bluetooth, and not in the closing line.
    case oursReportFloor = "ours, report 3 written alone on hidraw"

    /// The SDL path each of ours is held against: SDL's pre-uploaded run for our prepared paths, SDL's rumble
    /// call for our ordinary start; nil for SDL's own.
    var sdlCounterpart: LatencyPath? {
        switch self {
        case .oursManagerPrepared, .oursEnginePrepared: .sdlRun
        case .oursStart: .sdlRumble
        case .oursFloor: .sdlRun
        case .oursReportFloor: .sdlRumble
        case .sdlRun, .sdlRumble: nil
        }
    }

    /// The name of this path's pair with its SDL counterpart in the closing `peers:` line's keys
    /// (`latency-p50-NAME`, `latency-p99-NAME`).
    var pairName: String? {
        switch self {
        case .oursManagerPrepared: "manager-prepared-vs-sdl-run"
        case .oursEnginePrepared: "engine-prepared-vs-sdl-run"
        case .oursStart: "start-vs-sdl-rumble"
        case .sdlRun, .sdlRumble, .oursFloor, .oursReportFloor: nil
        }
    }

    /// The path's word in the commands `OursCaller.serve` answers: the case's name.
    var command: String { "\(self)" }

    /// Ours, in the order of the closing line's latency ratios (the floor is not one of them).
    static let ours: [LatencyPath] = [.oursManagerPrepared, .oursEnginePrepared, .oursStart]

    /// The paths a run's latency rounds take: every one but the floor unless it is asked for.
    static func measured(floor: Bool, on device: PeerDeviceKind) -> [LatencyPath] {
        allCases.filter {
            switch $0 {
            case .oursFloor: floor
            case .oursReportFloor: floor && device == .xboxOneBluetooth
            default: true
            }
        }
    }
}

/// `items` in the order of round `round` of a balanced Latin square (a Williams design). Over `2 * items.count`
/// rounds (`items.count` when the count is even), each item comes at each place equally often, and straight after
/// each other item equally often. So neither a place in the order nor the item run just before favours one. (A
/// rotation by one place a round balanced only the places: under emulation our prepared start ran about 15 µs
/// faster straight after HapticManager's, which shares its code, and it followed that path in four rounds of five.)
func balancedOrder<Item>(_ items: [Item], round: Int) -> [Item] {
    let count = items.count
    guard count > 1 else { return items }
    // The first row is 0, 1, n-1, 2, n-2, ...; row r adds r to each place (mod n); for an odd count the n rows
    // reversed follow.
    var first = [0]
    var low = 1
    var high = count - 1
    while first.count < count {
        if first.count % 2 == 1 {
            first.append(low)
            low += 1
        } else {
            first.append(high)
            high -= 1
        }
    }
    let row = round % (count % 2 == 0 ? count : 2 * count)
    let order = first.map { items[($0 + row) % count] }
    return row < count ? order : order.reversed()
}

enum PeerLatency {
    /// The tap ours triggers: a full-intensity transient.
    static let tap = AHAPFixtures.tap()

    /// Milliseconds of full rumble each SDL trigger asks for; ours plays a full-intensity tap.
    static let pulseMilliseconds = 30
    /// Microseconds from SDL's rumble call to its release (told to stop) on `device`: 5 ms longer than the pulse;
    /// on the Xbox pad, longer than the 50 ms for which SDL's HIDAPI Xbox driver holds back a rumble change after
    /// its last report over Bluetooth (it sends the held change when the game next pumps events, which sdl-peer
    /// does not between commands). Every other path's pulse ends by itself, and the round waits only for the
    /// motors to rest.
    static func held(on device: PeerDeviceKind) -> UInt32 {
        device == .xboxOneBluetooth ? 60_000 : UInt32(pulseMilliseconds + 5) * 1000
    }
    /// Microseconds of quiet just before each call, in the calling process (ours in `OursCaller`'s, SDL's in
    /// sdl-peer's), once the motors came to rest, so that neither the last path's nor a preparation's work is still
    /// under way and every call comes out of the same idle CPU. Slept on to the instant a quarter of the kernel's
    /// tick past a tick (`KernelTick.callTime`).
    static let pause: UInt32 = 10_000
    /// Microseconds of quiet after each call, in the calling process, before the harness does anything: the
    /// calling program answers with its time (a write to a pipe, which wakes the bench) and the bench then polls
    /// the device's record, and neither may compete with the driver's work item and the device for the guest's
    /// one processor while the call's output is on its way. Longer than that takes, but for SDL's rumble on the
    /// DualSense (about 11 ms: its HIDAPI driver sends on its own schedule).
    static let quietAfter: UInt32 = 3_000

    @MainActor
    static func measure(
        on device: PeerDevice, tools: PeerTools, paths: [LatencyPath], rounds: Int, warmUp: Int, tick: Int64
    ) async throws -> [LatencyPath: [Double]] {
        let rig = try Rig(device: device, tools: tools, floor: paths.contains(.oursFloor), tick: tick)
        defer { rig.close() }
        var samples: [LatencyPath: [Double]] = [:]
        for round in 0..<(warmUp + rounds) {
            for path in balancedOrder(paths, round: round) {
                try PeerRuns.waitForRest(device)
                let called = try rig.trigger(path)
                let seen = try await firstOutput(device, after: called, path: path)
                if round >= warmUp { samples[path, default: []].append(Double(seen - called) / 1000) }
                try rig.release(path)
                try PeerRuns.waitForRest(device)
            }
        }
        return samples
    }

    /// The ways to trigger on one device: SDL's two programs (the haptic one with its effect uploaded) and ours,
    /// each a process of its own (`OursCaller`, served by `haptics-bench --latency-caller`). The emulated pads
    /// and the virtual pad are served by threads of this process: a call made here would reach a pad thread that
    /// shares its address space, while SDL's reach it from another process, and under emulation the pad then
    /// starts with every page of its memory to look up again (about 0.1 ms more on the emulated Xbox pad, from the
    /// pad's thread switched in to its record: docs/bench.md, "Every caller in a process of its own").
    @MainActor
    struct Rig {
        let rumble: PeerProgram
        let haptic: PeerProgram
        let ours: PeerProgram
        /// The kernel's tick in nanoseconds, which every call is timed clear of (`KernelTick`).
        let tick: Int64
        /// The device measured, for how long SDL's rumble is held (`held(on:)`).
        let kind: PeerDeviceKind

        init(device: PeerDevice, tools: PeerTools, floor: Bool, tick: Int64) throws {
            self.tick = tick
            kind = device.kind
            ours = try PeerProgram(
                [
                    projectBinary("haptics-bench"), "--latency-caller", device.eventNode, "--peer-device",
                    device.kind.rawValue,
                ] + (floor ? ["--latency-floor"] : []))
            _ = try ours.line(startingWith: "ready", timeout: 30)
            rumble = try PeerProgram(tools.sdlCommand(.sdlRumble, on: device) + ["latency"])
            haptic = try PeerProgram(tools.sdlCommand(.sdlHaptic, on: device) + ["latency"])
            // SDL's effect is uploaded once, before any round: each round's call is its run alone.
            haptic.process.write("upload \(PeerLatency.pulseMilliseconds)\n")
            _ = try haptic.line(startingWith: "ok", timeout: 10)
        }

        func close() {
            for program in [rumble, haptic, ours] {
                program.process.closeInput()
                _ = program.process.finish(timeout: 10)
            }
        }

        /// Makes the call of `path` in its program; the CLOCK_MONOTONIC microseconds just before it. Every program
        /// sleeps the same quiet before its call, on to a quarter of a tick past one, and `quietAfter` after it
        /// before it answers: a call that comes out of an idle CPU pays for it (under emulation about 13 µs more
        /// at p50 on the virtual pad than one made straight after the last).
        func trigger(_ path: LatencyPath) throws -> Int64 {
            let program: PeerProgram
            let command: String
            switch path {
            case .sdlRumble, .sdlRun:
                program = path == .sdlRumble ? rumble : haptic
                command = "go \(pulseMilliseconds) \(pause) \(quietAfter) \(tick)"
            case .oursManagerPrepared, .oursEnginePrepared, .oursStart, .oursFloor, .oursReportFloor:
                program = ours
                command = "go \(path.command) \(pause) \(quietAfter) \(tick)"
            }
            program.process.write(command + "\n")
            let answer = try program.line(startingWith: "t ", timeout: 10)
            guard let time = Int64(answer.dropFirst(2)) else {
                throw PeerFailure(reason: "\(program.process.command) said \(answer)")
            }
            return time
        }

        /// Ends what `trigger` started where it does not end by itself: SDL's rumble, whose duration SDL ends
        /// only while the program pumps its events (this one waits for its next command), is told to stop.
        func release(_ path: LatencyPath) throws {
            guard path == .sdlRumble else { return }
            usleep(PeerLatency.held(on: kind))
            rumble.process.write("stop\n")
            _ = try rumble.line(startingWith: "ok", timeout: 10)
        }
    }

    /// Our side of the latency rounds, in a process of its own as SDL's are (`haptics-bench --latency-caller`):
    /// a HapticManager with the tap prepared, an engine with a player prepared once (a new player made for each
    /// ordinary start), and the floor's effect uploaded once when it is measured. Each call is made as sdl-peer
    /// makes SDL's (`timed`).
    @MainActor
    struct OursCaller {
        let manager: HapticManager
        let engine: HapticEngine
        /// Prepared once, started every round: its pulse stays uploaded between starts.
        let prepared: any HapticPatternPlayer
        let tap = PeerLatency.tap
        /// The floor's, when measured: a full-strength rumble of the tap's 30 ms, uploaded once on a descriptor of
        /// its own. The effect is kept for the caller's life: a released `UploadedEffect` erases its slot, and a
        /// play of the freed number would trigger whichever effect took it next (SDL's, uploaded just after).
        let floor: (device: EventDevice, effect: UploadedEffect, trigger: EffectTrigger)?
        /// The report floor's, when measured on the Xbox pad: its hidraw node and the report's bytes.
        let reportFloor: (hidraw: HidrawDevice, report: [UInt8])?

        init(eventNode: String, kind: PeerDeviceKind, floor: Bool) throws {
            let logger = PeerRuns.logger()
            var options = HapticEngineOptions()
            options.renderProfile = RenderProfile.named(kind.profile) ?? .genericRumble
            let output = HapticOutputSelection.device(.node(eventNode))
            let provider = EngineOutputProvider(output: output, options: options, logger: logger)
            manager = HapticManager(resolver: DefaultHapticResourceResolver(), engineProvider: provider, logger: logger)
            guard manager.engineAvailable else {
                throw PeerFailure(reason: "no HapticManager engine on \(eventNode)")
            }
            // Prepared once, like SDL's effect: a prepared pattern stays uploaded for every play of it.
            manager.prepare(pattern: tap)
            engine = HapticEngine(output: output, options: options, logger: logger)
            try engine.start()
            prepared = try engine.makePlayer(with: tap)
            guard try prepared.prepare() else {
                throw PeerFailure(reason: "the engine could not prepare the tap on \(eventNode)")
            }
            if floor {
                let opened = try EventDevice(node: eventNode, logger: logger)
                let effect = try opened.uploadEffect(
                    .rumble(strong: 1, weak: 1, lengthMilliseconds: UInt16(PeerLatency.pulseMilliseconds)))
                self.floor = (opened, effect, effect.trigger())
                if kind == .xboxOneBluetooth, let node = HDActuators.find(identity: opened.identity)?.node {
                    let report = XboxRumbleReport(
                        enable: XboxRumbleReport.enableStrong | XboxRumbleReport.enableWeak, strong: 100, weak: 100,
                        duration: UInt8(PeerLatency.pulseMilliseconds / 10), loopCount: 0)
                    reportFloor = (try HidrawDevice(node: node, logger: logger), report.bytes)
                } else {
                    reportFloor = nil
                }
            } else {
                self.floor = nil
                reportFloor = nil
            }
        }

        /// Answers the bench's commands on standard input until it closes it: `go PATH PAUSE QUIET TICK` makes
        /// the call of `PATH` (`LatencyPath.command`) and answers `t MICROSECONDS`, the time just before it.
        static func serve(eventNode: String, kind: PeerDeviceKind, floor: Bool) throws {
            let caller = try OursCaller(eventNode: eventNode, kind: kind, floor: floor)
            defer { caller.close() }
            print("ready")
            fflush(nil)
            while let line = readLine() {
                let words = line.split(separator: " ")
                guard words.count == 5, words[0] == "go",
                    let path = LatencyPath.allCases.first(where: { $0.command == words[1] }),
                    let pause = UInt32(words[2]), let quiet = UInt32(words[3]), let tick = Int64(words[4])
                else { throw PeerFailure(reason: "haptics-bench --latency-caller: unknown command: \(line)") }
                print("t \(try caller.call(path, pause: pause, quietAfter: quiet, tick: tick))")
                fflush(nil)
            }
        }

        func close() {
            engine.stop()
            floor?.device.close()
            reportFloor?.hidraw.close()
        }

        /// Makes the call of `path`; the CLOCK_MONOTONIC microseconds just before it.
        func call(_ path: LatencyPath, pause: UInt32, quietAfter: UInt32, tick: Int64) throws -> Int64 {
            switch path {
            case .oursManagerPrepared:
                return timed(pause, quietAfter, tick) { manager.play(pattern: tap) }
            case .oursEnginePrepared:
                return try timed(pause, quietAfter, tick) { try prepared.start(atTime: 0) }
            case .oursFloor:
                guard let trigger = floor?.trigger else { throw PeerFailure(reason: "the floor was not asked for") }
                return try timed(pause, quietAfter, tick) { try trigger.fire() }
            case .oursReportFloor:
                guard let reportFloor else {
                    throw PeerFailure(
                        reason: "the report floor needs the floor asked for, on an Xbox pad whose hidraw node "
                            + "was found")
                }
                return try timed(pause, quietAfter, tick) { try reportFloor.hidraw.write(reportFloor.report) }
            case .oursStart:
                // A new player each time, made before the clock starts: the call measured is `start`, as SDL's is
                // its rumble call.
                let player = try engine.makePlayer(with: tap)
                return try timed(pause, quietAfter, tick) { try player.start(atTime: 0) }
            case .sdlRun, .sdlRumble:
                throw PeerFailure(reason: "\(path.rawValue) is SDL's, made by sdl-peer")
            }
        }

        /// One call of ours as sdl-peer makes SDL's: `pause` of quiet and on to a quarter of a tick past one, the
        /// clock, the call, `quietAfter` of quiet; the CLOCK_MONOTONIC microseconds just before the call. Inlined,
        /// so that nothing but the call comes between the clock and the call's write.
        @inline(__always)
        private func timed(_ pause: UInt32, _ quietAfter: UInt32, _ tick: Int64, _ call: () throws -> Void) rethrows
            -> Int64
        {
            let earliest = Int64(Clock.now()) + Int64(pause) * 1000
            KernelTick.sleep(until: KernelTick.callTime(notBefore: earliest, period: tick))
            let called = Clock.microseconds()
            try call()
            usleep(quietAfter)
            return called
        }
    }

    static func firstOutput(_ device: PeerDevice, after start: Int64, path: LatencyPath) async throws -> Int64 {
        let deadline = Clock.microseconds() + 5_000_000
        while Clock.microseconds() < deadline {
            if let seen = device.firstOutput(after: start) { return seen }
            try await Task.sleep(for: .microseconds(200))
        }
        throw PeerFailure(reason: "\(device.kind.rawValue) never showed the output of \(path.rawValue)")
    }
}
