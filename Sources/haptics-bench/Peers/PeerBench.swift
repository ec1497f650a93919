// `make bench-peers` (`haptics-bench --peers`, in the qemu bench with udevd): the same patterns through SDL2's
// rumble and haptic APIs and through our engine, on the same devices, in one run. Prints a table per device and,
// last, `peers: latency-p50-PAIR=R@DEVICE latency-p99-PAIR=R@DEVICE ... fidelity=R writes=R cpu=R
// idle-wakeups=OURS/SDL`: each R ours / SDL's. The latency ratios are by pair (PeerLatency: each prepared path of
// ours against SDL's pre-uploaded run, our ordinary start against SDL's rumble call), the worst device's, named;
// the others are against SDL's better API per device and figure, geometric means over devices (and, for
// fidelity, patterns); lower is better. Every figure's runs are interleaved: each round (or pattern) runs every
// peer once, in the order of a balanced Latin square (`balancedOrder`).
import AHAPFiles
import Foundation
import HapticTestDevices
import LinuxHaptics

struct PeerBenchOptions {
    var devices: [PeerDeviceKind] = PeerDeviceKind.allCases
    /// How many patterns the fidelity figure plays (spread over their durations).
    var patternCount = 8
    var latencyRounds = 400
    /// Add the floor path (`LatencyPath.oursFloor`) to the latency rounds.
    var latencyFloor = false
    var latencyWarmUp = 10
    /// Rounds of the idle figure, each measuring every peer for `idleSeconds`.
    var idleRounds = 3
    var idleSeconds = 1.0
    /// Rounds of the SIGKILL figure, each killing every peer once; the figure is their median.
    var killRounds = 3
    var killLimit = 3.0
    /// Print the SVG overlays, framed for scripts/bench-peers to save.
    var printsPlots = false
    /// Measure the trigger latency only (a quick check of the start path); the playback figures stay unmeasured.
    var latencyOnly = false
    /// Measure the playback figures only (a check of the planner); the latency stays unmeasured.
    var playbackOnly = false

    /// The smoke `make test` runs: the virtual pad, one pattern, a few triggers, every figure still measured.
    static let smoke = PeerBenchOptions(
        devices: [.virtualPad], patternCount: 1, latencyRounds: 5, latencyWarmUp: 1, idleRounds: 1, idleSeconds: 1,
        killRounds: 1, killLimit: 3)
}

/// Everything measured on one device.
struct DeviceFigures {
    var kind: PeerDeviceKind
    var latency: [LatencyPath: [Double]] = [:]
    /// How long the latency rounds took, warm-up included.
    var latencySeconds = 0.0
    /// The kernel's tick the latency rounds kept off their calls, in nanoseconds.
    var latencyTick: Int64?
    /// Fidelity error (RMS, 0...1) per pattern, per peer.
    var fidelity: [Peer: [String: Double]] = [:]
    var writesPerSecond: [Peer: Double] = [:]
    /// CPU milliseconds per second of playback.
    var cpuPerSecond: [Peer: Double] = [:]
    var syscallsPerSecond: [Peer: Double] = [:]
    var idleWakeups: [Peer: Double] = [:]
    /// Milliseconds from SIGKILL to motors at rest, the median of the rounds; nil: still running at the limit
    /// (in at least half of them).
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
        let patterns = try benchPatterns(count: options.patternCount)
        print(
            "peers: \(patterns.count) \(AHAPFixtures.corpusOrFixturesName) pattern(s): "
                + patterns.map { ($0.path as NSString).lastPathComponent }.joined(separator: ", "))
        var all: [DeviceFigures] = []
        for kind in options.devices {
            let device = try PeerDevice(kind, logger: PeerRuns.logger())
            defer { device.destroy() }
            let figures = try await measure(device, patterns: patterns, tools: tools, options: options)
            PeerReport.printTable(figures, latencyOnly: options.latencyOnly)
            all.append(figures)
        }
        let summary = PeerReport.summary(all, latencyOnly: options.latencyOnly, playbackOnly: options.playbackOnly)
        print(summary.line)
        return summary.complete
    }

    /// Every figure on one device. The peers take turns at every step (a latency round, a pattern, a strace run,
    /// an idle round, a kill round), starting one peer further on each time, rather than one peer running all its
    /// measurements before the next: a slow stretch of the shared machine then reaches every peer alike.
    static func measure(
        _ device: PeerDevice, patterns: [(path: String, length: Double)], tools: PeerTools, options: PeerBenchOptions
    ) async throws -> DeviceFigures {
        var figures = DeviceFigures(kind: device.kind)
        let began = Clock.microseconds()
        if !options.playbackOnly {
            guard let tick = KernelTick.period() else {
                throw PeerFailure(
                    reason: "the kernel's tick could not be measured from /proc/schedstat's jiffies (no two of "
                        + "three readings agreed); the latency rounds keep it off their calls (a kernel with "
                        + "CONFIG_SCHEDSTATS and CONFIG_HZ of 100, 250, 300 or 1000)")
            }
            figures.latencyTick = tick
            figures.latency = try await PeerLatency.measure(
                on: device, tools: tools, paths: LatencyPath.measured(floor: options.latencyFloor, on: device.kind),
                rounds: options.latencyRounds, warmUp: options.latencyWarmUp, tick: tick)
        }
        figures.latencySeconds = Double(Clock.microseconds() - began) / 1e6
        if options.latencyOnly { return figures }
        let busiest = patterns.max { $0.length < $1.length }
        var played: [Peer: (seconds: Double, cpu: Double, writes: Int)] = [:]
        for (index, pattern) in patterns.enumerated() {
            let intended = try tools.intended(pattern.path, profile: device.kind.profile)
            let name = (pattern.path as NSString).lastPathComponent
            for peer in balancedOrder(Peer.allCases, round: index) {
                let run = try PeerRuns.play(
                    peer, pattern: pattern.path, length: pattern.length, on: device, tools: tools)
                figures.fidelity[peer, default: [:]][name] = PeerMetrics.fidelityError(
                    observed: run.output, intended: intended, length: pattern.length + 0.1)
                figures.observed[peer, default: [:]][name] = run.output
                let total = played[peer] ?? (0, 0, 0)
                played[peer] = (total.seconds + pattern.length, total.cpu + run.cpuSeconds, total.writes + run.writes)
            }
        }
        for (peer, total) in played {
            figures.cpuPerSecond[peer] = total.cpu * 1000 / total.seconds
            figures.writesPerSecond[peer] = Double(total.writes) / total.seconds
        }
        // strace slows the program many times over: one pattern, the longest, is enough for the count.
        if let busiest {
            for peer in balancedOrder(Peer.allCases, round: patterns.count) {
                guard
                    let calls = try PeerRuns.syscalls(
                        peer, pattern: busiest.path, length: busiest.length, on: device, tools: tools)
                else { continue }
                figures.syscallsPerSecond[peer] = Double(calls) / busiest.length
            }
        }
        var switches: [Peer: Double] = [:]
        for round in 0..<options.idleRounds {
            for peer in balancedOrder(Peer.allCases, round: round) {
                switches[peer, default: 0] += try PeerRuns.idleContextSwitches(
                    peer, on: device, tools: tools, seconds: options.idleSeconds)
            }
        }
        for (peer, count) in switches {
            figures.idleWakeups[peer] = count / (options.idleSeconds * Double(options.idleRounds))
        }
        var kills: [Peer: [Double]] = [:]
        for round in 0..<options.killRounds {
            for peer in balancedOrder(Peer.allCases, round: round) {
                let rest = try PeerRuns.killToRest(peer, on: device, tools: tools, limit: options.killLimit)
                kills[peer, default: []].append(rest ?? .infinity)
            }
        }
        for (peer, times) in kills {
            let median = PeerMetrics.median(times)
            figures.killToRest[peer] = median.isFinite ? median : nil
        }
        if options.printsPlots { try PeerReport.printPlots(figures, patterns: patterns, tools: tools) }
        return figures
    }

    /// `count` patterns of 0.25 to 2.5 s, spread evenly over their durations (shortest to longest), from the corpus
    /// when `AHAP_CORPUS` names it, otherwise from the AHAP fixtures (`AHAPFixtures.corpusOrFixtures`).
    static func benchPatterns(count: Int) throws -> [(path: String, length: Double)] {
        let files = try AHAPFixtures.corpusOrFixtures().files
        let candidates = files.compactMap { url -> (path: String, length: Double)? in
            guard let pattern = try? HapticPattern(contentsOf: url), !pattern.hapticEvents.isEmpty,
                (0.25...2.5).contains(pattern.duration)
            else { return nil }
            return (url.path, pattern.duration)
        }.sorted { $0.length < $1.length }
        guard !candidates.isEmpty else { throw PeerFailure(reason: "no AHAP pattern of 0.25 to 2.5 s") }
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
