// `make bench-peers` (`haptics-bench --peers`, in the qemu bench with udevd): the same patterns through SDL2's
// rumble and haptic APIs and through our engine, on the same devices, in one run. Prints a table per device and,
// last, `peers: latency-p99=R fidelity=R writes=R cpu=R idle-wakeups=OURS/SDL`, each R ours / SDL's (SDL's better
// API per device and figure), geometric means over devices (and, for fidelity, patterns); lower is better.
import AHAP
import Foundation
import HapticTestDevices
import LinuxHaptics

struct PeerBenchOptions {
    var devices: [PeerDeviceKind] = PeerDeviceKind.allCases
    /// How many corpus patterns the fidelity figure plays (spread over the corpus's durations).
    var patternCount = 8
    var latencyRounds = 120
    var latencyWarmUp = 5
    var idleSeconds = 3.0
    var killLimit = 3.0
    /// Print the SVG overlays, framed for scripts/bench-peers to save.
    var printsPlots = false
    /// Measure the trigger latency only (a quick check of the start path); the playback figures stay unmeasured.
    var latencyOnly = false

    /// The smoke `make test` runs: the virtual pad, one pattern, a few triggers, every figure still measured.
    static let smoke = PeerBenchOptions(
        devices: [.virtualPad], patternCount: 1, latencyRounds: 5, latencyWarmUp: 1, idleSeconds: 1, killLimit: 3)
}

/// Everything measured on one device.
struct DeviceFigures {
    var kind: PeerDeviceKind
    var latency: [LatencyPath: [Double]] = [:]
    /// Fidelity error (RMS, 0...1) per pattern, per peer.
    var fidelity: [Peer: [String: Double]] = [:]
    var writesPerSecond: [Peer: Double] = [:]
    /// CPU milliseconds per second of playback.
    var cpuPerSecond: [Peer: Double] = [:]
    var syscallsPerSecond: [Peer: Double] = [:]
    var idleWakeups: [Peer: Double] = [:]
    /// Milliseconds from SIGKILL to motors at rest; nil: still running at the limit.
    var killToRest: [Peer: Double?] = [:]
    /// What the device ran for each pattern (by file name), per peer: the overlays' lines.
    var observed: [Peer: [String: LevelSeries]] = [:]
}

enum PeerBench {
    static let frameRate = 60

    static func run(_ options: PeerBenchOptions) async throws -> Bool {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haptics-peers-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // In the qemu bench sdl-peer is on PATH and the C example in the working directory; where this runs
        // directly, both are in the build folder beside this program's.
        let buildFolder = (projectBinary("haptics-bench") as NSString).deletingLastPathComponent + "/.."
        let sdlPeer = onPath("sdl-peer") ? "sdl-peer" : buildFolder + "/peers/sdl-peer"
        guard onPath(sdlPeer) || FileManager.default.isExecutableFile(atPath: sdlPeer) else {
            throw PeerFailure(reason: "no sdl-peer on PATH or at \(sdlPeer) (scripts/peers builds it)")
        }
        let example = [
            FileManager.default.currentDirectoryPath + "/capi-example/play", buildFolder + "/capi-example/play",
        ]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
        let tools = PeerTools(
            haptics: projectBinary("haptics"), sdlPeer: sdlPeer, strace: onPath("strace") ? "strace" : nil,
            cExample: example, folder: folder)
        let patterns = try corpusPatterns(count: options.patternCount)
        print(
            "peers: \(patterns.count) corpus pattern(s): "
                + patterns.map { ($0.path as NSString).lastPathComponent }.joined(separator: ", "))
        var all: [DeviceFigures] = []
        for kind in options.devices {
            let device = try PeerDevice(kind, logger: PeerRuns.logger())
            defer { device.destroy() }
            let figures = try await measure(device, patterns: patterns, tools: tools, options: options)
            PeerReport.printTable(figures, latencyOnly: options.latencyOnly)
            all.append(figures)
        }
        let summary = PeerReport.summary(all, latencyOnly: options.latencyOnly)
        print(summary.line)
        return summary.complete
    }

    static func measure(
        _ device: PeerDevice, patterns: [(path: String, length: Double)], tools: PeerTools, options: PeerBenchOptions
    ) async throws -> DeviceFigures {
        var figures = DeviceFigures(kind: device.kind)
        figures.latency = try await PeerLatency.measure(
            on: device, tools: tools, rounds: options.latencyRounds, warmUp: options.latencyWarmUp)
        if options.latencyOnly { return figures }
        let busiest = patterns.max { $0.length < $1.length }
        for peer in Peer.allCases {
            var plotted: [String: LevelSeries] = [:]
            var played = (seconds: 0.0, cpu: 0.0, writes: 0)
            for pattern in patterns {
                let run = try PeerRuns.play(
                    peer, pattern: pattern.path, length: pattern.length, on: device, tools: tools)
                let intended = try tools.intended(pattern.path, profile: device.kind.profile)
                let name = (pattern.path as NSString).lastPathComponent
                figures.fidelity[peer, default: [:]][name] = PeerMetrics.fidelityError(
                    observed: run.output, intended: intended, length: pattern.length + 0.1)
                plotted[name] = run.output
                played = (played.seconds + pattern.length, played.cpu + run.cpuSeconds, played.writes + run.writes)
                // strace slows the program many times over: one pattern, the longest, is enough for the count.
                guard pattern.path == busiest?.path,
                    let calls = try PeerRuns.syscalls(
                        peer, pattern: pattern.path, length: pattern.length, on: device, tools: tools)
                else { continue }
                figures.syscallsPerSecond[peer] = Double(calls) / pattern.length
            }
            figures.cpuPerSecond[peer] = played.cpu * 1000 / played.seconds
            figures.writesPerSecond[peer] = Double(played.writes) / played.seconds
            figures.observed[peer] = plotted
            figures.idleWakeups[peer] = try PeerRuns.idleWakeups(
                peer, on: device, tools: tools, seconds: options.idleSeconds)
            figures.killToRest[peer] = try PeerRuns.killToRest(peer, on: device, tools: tools, limit: options.killLimit)
        }
        if options.printsPlots { try PeerReport.printPlots(figures, patterns: patterns, tools: tools) }
        return figures
    }

    /// `count` corpus patterns of 0.25 to 2.5 s, spread evenly over their durations (shortest to longest).
    static func corpusPatterns(count: Int) throws -> [(path: String, length: Double)] {
        let candidates = try AHAPCorpus.files().compactMap { url -> (path: String, length: Double)? in
            guard let pattern = try? HapticPattern(contentsOf: url), !pattern.hapticEvents.isEmpty,
                (0.25...2.5).contains(pattern.duration)
            else { return nil }
            return (url.path, pattern.duration)
        }.sorted { $0.length < $1.length }
        guard !candidates.isEmpty else { throw PeerFailure(reason: "no corpus pattern of 0.25 to 2.5 s") }
        guard count > 1 else { return [candidates[candidates.count / 2]] }
        let picked = (0..<min(count, candidates.count)).map { index in
            candidates[index * (candidates.count - 1) / max(min(count, candidates.count) - 1, 1)]
        }
        return picked
    }

    /// A pattern that asks for nothing to be felt: one tap at intensity 0. Our engine idles on the device after it.
    static func quietPattern() -> String {
        #"{"Version":1,"Pattern":[{"Event":{"EventType":"HapticTransient","Time":0,"EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0}]}}]}"#
    }

    /// Full rumble for `seconds`.
    static func continuousPattern(seconds: Double) -> String {
        #"{"Version":1,"Pattern":[{"Event":{"EventType":"HapticContinuous","Time":0,"EventDuration":\#(seconds),"EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterID":"HapticSharpness","ParameterValue":0.5}]}}]}"#
    }
}
