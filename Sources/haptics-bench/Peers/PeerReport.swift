// What `make bench-peers` prints: a table per device, the closing summary line, and the overlay plots.
import Foundation

enum PeerReport {
    /// The table of one device: a row per figure, a column per peer; with `latencyOnly`, the latency rows alone.
    static func printTable(_ figures: DeviceFigures, latencyOnly: Bool = false) {
        print(
            "== \(figures.kind.rawValue) (profile \(figures.kind.profile)); latency rounds took "
                + String(format: "%.0f s", figures.latencySeconds)
                + (figures.latencyTick.map { tick in
                    String(
                        format: ", every call %.1f ms past a tick of the kernel's %.1f ms", Double(tick) / 4e6,
                        Double(tick) / 1e6)
                } ?? ""))
        for path in LatencyPath.allCases where figures.latency[path] != nil {
            let samples = Measurement(name: path.rawValue, unit: "ms", samples: figures.latency[path] ?? [])
            print(
                "  latency, call -> device output, \(path.rawValue): p50 \(format(samples.percentile(50))) ms, "
                    + "p99 \(format(samples.percentile(99))) ms (n=\(samples.samples.count))")
        }
        for path in LatencyPath.allCases where figures.latency[path] != nil {
            guard let sdl = path.sdlCounterpart else { continue }
            let ratio = { (p: Double) -> String in
                guard let value = latencyRatio(figures, path, percentile: p) else { return "-" }
                let spread = PeerMetrics.resampledSpread(
                    ours: figures.latency[path] ?? [], theirs: figures.latency[sdl] ?? [], percentile: p)
                return format(value) + (spread.map { " (±" + format($0) + " resampled)" } ?? "")
            }
            print("  latency ratio, \(path.rawValue) / \(sdl.rawValue): p50 \(ratio(50)), p99 \(ratio(99))")
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

    /// The `percentile` of `path`'s latency over that of its SDL counterpart on one device; nil when either was
    /// not measured.
    /// `latency-p50-NAME` or `latency-p99-NAME` of a path's pair.
    static func latencyKey(_ path: LatencyPath, percentile: Double) -> String {
        "latency-p\(Int(percentile))-\(path.pairName ?? path.rawValue)"
    }

    static func latencyRatio(_ figures: DeviceFigures, _ path: LatencyPath, percentile: Double) -> Double? {
        guard let sdl = path.sdlCounterpart else { return nil }
        let value = { (path: LatencyPath) in
            Measurement(name: "", unit: "ms", samples: figures.latency[path] ?? []).percentile(percentile)
        }
        let ours = value(path)
        let theirs = value(sdl)
        guard ours.isFinite, theirs.isFinite, theirs > 0 else { return nil }
        return ours / theirs
    }

    struct Summary {
        var line: String
        /// Every ratio was measured.
        var complete: Bool
    }

    /// The closing line, a geometric mean over devices of each ratio (fidelity: over devices and patterns, pattern
    /// by pattern). The latency ratios are p99s by pair, each named in its key: our two prepared paths over SDL's
    /// run of an effect uploaded once, our ordinary start over SDL's rumble call. The other figures are ours over
    /// SDL's better API. With `latencyOnly`, the latency ratios alone, and complete when they were measured.
    static func summary(_ all: [DeviceFigures], latencyOnly: Bool = false, playbackOnly: Bool = false) -> Summary {
        /// Per path and percentile, the worst device's ratio and its name.
        var latency: [String: (ratio: Double, device: String)] = [:]
        var latencyMissing = false
        var fidelity: [Double] = []
        var writes: [Double] = []
        var fidelityVsHaptic: [Double] = []
        var writesVsHaptic: [Double] = []
        var cpu: [Double] = []
        var oursIdle: [Double] = []
        var sdlIdle: [Double] = []
        for figures in all {
            for path in LatencyPath.ours {
                for percentile in [50.0, 99.0] {
                    let key = latencyKey(path, percentile: percentile)
                    guard let ratio = latencyRatio(figures, path, percentile: percentile) else {
                        latencyMissing = true
                        continue
                    }
                    if ratio > latency[key]?.ratio ?? -.infinity { latency[key] = (ratio, figures.kind.rawValue) }
                }
            }
            for (pattern, ours) in figures.fidelity[.ours] ?? [:] {
                if let sdl = bestSDL({ figures.fidelity[$0]?[pattern] }) { fidelity.append(ours / max(sdl, 1e-6)) }
            }
            if let ours = figures.writesPerSecond[.ours], let sdl = bestSDL({ figures.writesPerSecond[$0] }) {
                writes.append(ours / max(sdl, 1e-6))
            }
            // Against one API, SDL's haptic one (the closer of its two to the pattern): error and writes together.
            for (pattern, ours) in figures.fidelity[.ours] ?? [:] {
                if let sdl = figures.fidelity[.sdlHaptic]?[pattern] { fidelityVsHaptic.append(ours / max(sdl, 1e-6)) }
            }
            if let ours = figures.writesPerSecond[.ours], let sdl = figures.writesPerSecond[.sdlHaptic] {
                writesVsHaptic.append(ours / max(sdl, 1e-6))
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
        let latencyFields = LatencyPath.ours.flatMap { path in
            [50.0, 99.0].map { percentile in
                let key = latencyKey(path, percentile: percentile)
                return "\(key)=" + (latency[key].map { "\(format($0.ratio))@\($0.device)" } ?? "-")
            }
        }
        let latencyMeasured = !latencyMissing && !latency.isEmpty
        if latencyOnly {
            return Summary(line: "peers: " + latencyFields.joined(separator: " "), complete: latencyMeasured)
        }
        let mean = { (values: [Double]) in values.isEmpty ? "-" : format(values.reduce(0, +) / Double(values.count)) }
        let fields =
            (playbackOnly ? [] : latencyFields) + [
                "fidelity=\(ratio(fidelity))", "writes=\(ratio(writes))",
                "fidelity-vs-sdl-haptic=\(ratio(fidelityVsHaptic))", "writes-vs-sdl-haptic=\(ratio(writesVsHaptic))",
                "cpu=\(ratio(cpu))", "idle-wakeups=\(mean(oursIdle))/\(mean(sdlIdle))",
            ]
        let complete =
            (playbackOnly || latencyMeasured) && [fidelity, writes, cpu, oursIdle].allSatisfy { !$0.isEmpty }
        return Summary(line: "peers: " + fields.joined(separator: " "), complete: complete)
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
