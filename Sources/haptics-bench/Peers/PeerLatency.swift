// Trigger latency against SDL: call -> first output on the device, for SDL's two APIs (in their own process,
// which answers with the time it made the call) and for ours (a prepared HapticManager transient, and the
// ordinary `start(atTime: 0)` of a player just made with `makePlayer(with:)`), interleaved round by round.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput

enum LatencyPath: String, CaseIterable, Sendable {
    case sdlRumble = "SDL_GameControllerRumble"
    case sdlHaptic = "SDL_HapticUpdateEffect + Run"
    case oursPrepared = "ours, prepared transient (HapticManager)"
    case oursStart = "ours, start of an unprepared player"
}

enum PeerLatency {
    /// Milliseconds of full rumble each SDL trigger asks for; ours plays a full-intensity tap.
    static let pulseMilliseconds = 30
    static let pause: UInt32 = 30_000

    @MainActor
    static func measure(on device: PeerDevice, tools: PeerTools, rounds: Int, warmUp: Int) async throws
        -> [LatencyPath: [Double]]
    {
        let rig = try Rig(device: device, tools: tools)
        defer { rig.close() }
        var samples: [LatencyPath: [Double]] = [:]
        for round in 0..<(warmUp + rounds) {
            for path in LatencyPath.allCases {
                try PeerRuns.waitForRest(device)
                let called = try rig.trigger(path)
                let seen = try await firstOutput(device, after: called, path: path)
                if round >= warmUp { samples[path, default: []].append(Double(seen - called) / 1000) }
                usleep(UInt32(pulseMilliseconds) * 1000 + pause)
                try rig.release(path)
            }
        }
        return samples
    }

    /// The four ways to trigger on one device: SDL's two programs, a HapticManager and an engine of ours.
    @MainActor
    struct Rig {
        let manager: HapticManager
        let engine: HapticEngine
        let rumble: PeerProgram
        let haptic: PeerProgram
        /// A full-intensity transient.
        let tap = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticTransient,
                    parameters: [
                        HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                        HapticEventParameter(parameterID: .hapticSharpness, value: 0.5),
                    ], relativeTime: 0)
            ], parameters: [])

        init(device: PeerDevice, tools: PeerTools) throws {
            let logger = PeerRuns.logger()
            var options = HapticEngineOptions()
            options.renderProfile = RenderProfile.named(device.kind.profile) ?? .genericRumble
            let output = HapticOutputSelection.device(.node(device.eventNode))
            let provider = EngineOutputProvider(output: output, options: options, logger: logger)
            manager = HapticManager(resolver: DefaultHapticResourceResolver(), engineProvider: provider, logger: logger)
            guard manager.engineAvailable else {
                throw PeerFailure(reason: "no HapticManager engine on \(device.eventNode)")
            }
            engine = HapticEngine(output: output, options: options, logger: logger)
            try engine.start()
            rumble = try PeerProgram(tools.sdlCommand(.sdlRumble, on: device) + ["latency"])
            haptic = try PeerProgram(tools.sdlCommand(.sdlHaptic, on: device) + ["latency"])
        }

        func close() {
            for program in [rumble, haptic] {
                program.process.closeInput()
                _ = program.process.finish(timeout: 10)
            }
            engine.stop()
        }

        /// Makes the call of `path`; the CLOCK_MONOTONIC microseconds just before it.
        func trigger(_ path: LatencyPath) throws -> Int64 {
            switch path {
            case .sdlRumble, .sdlHaptic:
                let program = path == .sdlRumble ? rumble : haptic
                program.process.write("go \(pulseMilliseconds)\n")
                let answer = try program.line(startingWith: "t ", timeout: 10)
                guard let time = Int64(answer.dropFirst(2)) else {
                    throw PeerFailure(reason: "sdl-peer said \(answer)")
                }
                return time
            case .oursPrepared:
                manager.prepare(pattern: tap)
                usleep(pause)
                let called = Clock.microseconds()
                manager.play(pattern: tap)
                return called
            case .oursStart:
                // A new player each time, made before the clock starts: the call measured is `start`, as SDL's is
                // its rumble call.
                let player = try engine.makePlayer(with: tap)
                usleep(pause)
                let called = Clock.microseconds()
                try player.start(atTime: 0)
                return called
            }
        }

        /// Ends what `trigger` started where it does not end by itself: SDL's rumble is told to stop.
        func release(_ path: LatencyPath) throws {
            guard path == .sdlRumble || path == .sdlHaptic else { return }
            let program = path == .sdlRumble ? rumble : haptic
            program.process.write("stop\n")
            _ = try program.line(startingWith: "ok", timeout: 10)
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
