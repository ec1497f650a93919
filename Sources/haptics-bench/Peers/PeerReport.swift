// What `make bench-peers` prints: a table per device, the closing summary line, and the overlay plots.
import Foundation

enum PeerReport {
    /// The table of one device: a row per figure, a column per peer; with `latencyOnly`, the latency rows alone.
    static func printTable(_ figures: DeviceFigures, latencyOnly: Bool = false) {
        print("== \(figures.kind.rawValue) (profile \(figures.kind.profile))")
        for path in LatencyPath.allCases {
            let samples = Measurement(name: path.rawValue, unit: "ms", samples: figures.latency[path] ?? [])
            print(
                "  latency, call -> device output, \(path.rawValue): p50 \(format(samples.percentile(50))) ms, "
                    + "p99 \(format(samples.percentile(99))) ms (n=\(samples.samples.count))")
        }
        if latencyOnly { return }
        let peers = Peer.allCases
        let header =
            "  " + "figure".padding(toLength: 34, withPad: " ", startingAt: 0)
            + peers.map { $0.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0) }.joined()
        print(header)
        let rows: [(String, (Peer) -> Double?)] = [
            ("fidelity error, RMS (mean)", { peer in meanFidelity(figures, peer) }),
            ("device writes / s of playback", { figures.writesPerSecond[$0] }),
            ("system calls / s of playback", { figures.syscallsPerSecond[$0] }),
            ("CPU ms / s of playback", { figures.cpuPerSecond[$0] }),
            ("wake-ups / s, open and idle", { figures.idleWakeups[$0] }),
            ("SIGKILL -> motors at rest, ms", { peer in figures.killToRest[peer].map { $0 ?? .infinity } }),
        ]
        for (name, value) in rows {
            let cells = peers.map { peer -> String in
                let text = value(peer).map { $0.isInfinite ? "never" : format($0) } ?? "-"
                return text.padding(toLength: 14, withPad: " ", startingAt: 0)
            }
            print("  " + name.padding(toLength: 34, withPad: " ", startingAt: 0) + cells.joined())
        }
        for (pattern, error) in (figures.fidelity[.ours] ?? [:]).sorted(by: { $0.key < $1.key }) {
            let sdl = Peer.allCases.filter(\.isSDL).map { figures.fidelity[$0]?[pattern].map(format) ?? "-" }
            print("    fidelity \(pattern): ours \(format(error)), SDL rumble \(sdl[0]), SDL haptic \(sdl[1])")
        }
    }

    static func meanFidelity(_ figures: DeviceFigures, _ peer: Peer) -> Double? {
        guard let values = figures.fidelity[peer]?.values, !values.isEmpty else { return nil }
        return values.reduce(0, +) / Double(values.count)
    }

    /// SDL's better figure of its two APIs (the lower one), nil when neither was measured.
    static func bestSDL(_ value: (Peer) -> Double?) -> Double? {
        Peer.allCases.filter(\.isSDL).compactMap(value).min()
    }

    struct Summary {
        var line: String
        /// Every ratio was measured.
        var complete: Bool
    }

    /// The closing line: each figure ours / SDL's better API, geometric mean over devices (fidelity: over devices
    /// and patterns, pattern by pattern). With `latencyOnly`, the latency figure alone, and complete when it was
    /// measured.
    static func summary(_ all: [DeviceFigures], latencyOnly: Bool = false) -> Summary {
        var latency: [Double] = []
        var fidelity: [Double] = []
        var writes: [Double] = []
        var cpu: [Double] = []
        var oursIdle: [Double] = []
        var sdlIdle: [Double] = []
        for figures in all {
            let p99 = { (path: LatencyPath) in
                Measurement(name: "", unit: "ms", samples: figures.latency[path] ?? []).percentile(99)
            }
            if let sdl = [p99(.sdlRumble), p99(.sdlHaptic)].filter(\.isFinite).min() {
                latency.append(p99(.oursPrepared) / sdl)
            }
            for (pattern, ours) in figures.fidelity[.ours] ?? [:] {
                if let sdl = bestSDL({ figures.fidelity[$0]?[pattern] }) { fidelity.append(ours / max(sdl, 1e-6)) }
            }
            if let ours = figures.writesPerSecond[.ours], let sdl = bestSDL({ figures.writesPerSecond[$0] }) {
                writes.append(ours / max(sdl, 1e-6))
            }
            if let ours = figures.cpuPerSecond[.ours], let sdl = bestSDL({ figures.cpuPerSecond[$0] }) {
                cpu.append(ours / max(sdl, 1e-6))
            }
            if let ours = figures.idleWakeups[.ours], let sdl = bestSDL({ figures.idleWakeups[$0] }) {
                oursIdle.append(ours)
                sdlIdle.append(sdl)
            }
        }
        let ratio = { (values: [Double]) in PeerMetrics.geometricMean(values).map(format) ?? "-" }
        if latencyOnly { return Summary(line: "peers: latency-p99=\(ratio(latency))", complete: !latency.isEmpty) }
        let mean = { (values: [Double]) in values.isEmpty ? "-" : format(values.reduce(0, +) / Double(values.count)) }
        let line =
            "peers: latency-p99=\(ratio(latency)) fidelity=\(ratio(fidelity)) writes=\(ratio(writes)) "
            + "cpu=\(ratio(cpu)) idle-wakeups=\(mean(oursIdle))/\(mean(sdlIdle))"
        let complete = [latency, fidelity, writes, cpu, oursIdle].allSatisfy { !$0.isEmpty }
        return Summary(line: line, complete: complete)
    }

    /// An overlay (intended, SDL's two APIs, ours) for the three longest patterns the device played.
    static func printPlots(_ figures: DeviceFigures, patterns: [(path: String, length: Double)], tools: PeerTools)
        throws
    {
        for pattern in patterns.sorted(by: { $0.length > $1.length }).prefix(3) {
            let name = (pattern.path as NSString).lastPathComponent
            let intended = try tools.intended(pattern.path, profile: figures.kind.profile)
            let plot = OverlayPlot(
                title: "\(name) on \(figures.kind.rawValue): what the device ran",
                length: pattern.length + 0.1,
                lines: [
                    .init(label: "intended", color: "#999999", series: intended),
                    .init(
                        label: "SDL rumble, 60 Hz", color: "#d95f02",
                        series: aligned(figures.observed[.sdlRumble]?[name], to: intended)),
                    .init(
                        label: "SDL haptic", color: "#7570b3",
                        series: aligned(figures.observed[.sdlHaptic]?[name], to: intended)),
                    .init(
                        label: "ours", color: "#1b9e77", series: aligned(figures.observed[.ours]?[name], to: intended)),
                ])
            print("--- svg peers-\(figures.kind.rawValue)-\((name as NSString).deletingPathExtension).svg")
            print(plot.svg, terminator: "")
            print("--- end")
        }
    }

    /// `series` lined up on `intended` as the fidelity figure compares them (its first output on the intended one).
    static func aligned(_ series: LevelSeries?, to intended: LevelSeries) -> LevelSeries {
        guard let series, let first = series.firstOutput else { return LevelSeries(points: []) }
        return series.shifted(by: (intended.firstOutput ?? 0) - first)
    }
}
