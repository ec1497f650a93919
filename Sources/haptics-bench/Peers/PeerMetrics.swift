// The arithmetic of `make bench-peers`, kept apart from the devices and processes so that it can be tested on its
// own: motor level series, the fidelity error of what a device ran against what the pattern intends, the summary
// ratios, strace's count table and the overlay plot.
import AHAP
import Foundation

/// Motor levels over time as steps: each point holds from its time until the next one. Times in seconds.
struct LevelSeries: Equatable, Sendable {
    struct Point: Equatable, Sendable {
        var time: Double
        var strong: Double
        var weak: Double
    }

    var points: [Point]

    /// The levels at `time`: those of the last point at or before it, 0 before the first.
    func levels(at time: Double) -> (strong: Double, weak: Double) {
        var low = 0
        var high = points.count
        while low < high {
            let middle = (low + high) / 2
            if points[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return (0, 0) }
        return (points[low - 1].strong, points[low - 1].weak)
    }

    /// The first time the output is above zero, if ever.
    var firstOutput: Double? { points.first { $0.strong > 0 || $0.weak > 0 }?.time }

    /// The same series moved by `offset` seconds.
    func shifted(by offset: Double) -> LevelSeries {
        LevelSeries(points: points.map { Point(time: $0.time + offset, strong: $0.strong, weak: $0.weak) })
    }

    /// Reads `time,strong,weak` rows, as `haptics render --format csv` writes them (a header line first).
    init(csv: String) {
        points = csv.split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard fields.count == 3 else { return nil }
            return Point(time: fields[0], strong: fields[1], weak: fields[2])
        }
    }

    init(points: [Point]) { self.points = points }
}

enum PeerMetrics {
    /// The fidelity error: the root mean square, over both motors and every millisecond from the intended
    /// output's start to `length` seconds after it, of the level a device ran minus the level intended (0...1).
    /// The time a call takes to reach the device is the latency figure's business, not this one's: the observed
    /// series is first lined up on the intended one, its first output on the intended first output, then moved
    /// by whichever offset within `search` seconds of that fits best (a first command that left late would
    /// otherwise shift everything after it).
    static func fidelityError(
        observed: LevelSeries, intended: LevelSeries, length: Double, search: Double = 0.03
    ) -> Double {
        let intendedStart = intended.firstOutput ?? 0
        let lined = observed.firstOutput.map { observed.shifted(by: intendedStart - $0) } ?? observed
        let reach = Int((search * 1000).rounded())
        return (-reach...reach).map { step in
            rootMeanSquare(lined.shifted(by: Double(step) / 1000), intended, length: length)
        }.min() ?? .nan
    }

    private static func rootMeanSquare(_ observed: LevelSeries, _ intended: LevelSeries, length: Double) -> Double {
        let steps = max(Int((length * 1000).rounded()), 1)
        var sum = 0.0
        for step in 0..<steps {
            let time = Double(step) / 1000
            let want = intended.levels(at: time)
            let got = observed.levels(at: time)
            sum +=
                (got.strong - want.strong) * (got.strong - want.strong) + (got.weak - want.weak)
                * (got.weak - want.weak)
        }
        return (sum / Double(2 * steps)).squareRoot()
    }

    /// The geometric mean of positive values; nil when there is none. A zero counts as `floor`, so that one
    /// perfect figure does not make the whole mean zero.
    static func geometricMean(_ values: [Double], floor: Double = 1e-6) -> Double? {
        let usable = values.filter { $0.isFinite && $0 >= 0 }
        guard !usable.isEmpty else { return nil }
        let logSum = usable.reduce(0) { $0 + log(max($1, floor)) }
        return exp(logSum / Double(usable.count))
    }

    /// How much of a ratio of two percentiles a run owes to its draw: the standard deviation of
    /// `percentile(ours') / percentile(theirs')` over `resamples` resamples of the run, each side drawn again from its
    /// own samples with replacement, as many as it has (the bootstrap). It says how far a run of the same size could
    /// land from this one; a resample holds no value the run did not, so a tail the run hardly reached is
    /// under-stated. Seeded, so the same samples always give the same spread; nil when either side is empty.
    static func resampledSpread(
        ours: [Double], theirs: [Double], percentile: Double, resamples: Int = 1000
    ) -> Double? {
        guard !ours.isEmpty, !theirs.isEmpty, resamples > 1 else { return nil }
        var generator = SeededGenerator(seed: 0x5EED_0F_B007)
        var drawn = [Double](repeating: 0, count: max(ours.count, theirs.count))
        // One resample's percentile, drawn into `drawn` and sorted there. Taking each draw modulo the count favours
        // low indices by at most count / 2^64: nothing a figure shows.
        func percentileOfResample(_ samples: [Double]) -> Double {
            let count = samples.count
            drawn.withUnsafeMutableBufferPointer { buffer in
                for index in 0..<count { buffer[index] = samples[Int(generator.next() % UInt64(count))] }
                buffer[0..<count].sort()
            }
            return drawn.withUnsafeBufferPointer { Measurement.percentile(percentile, ofSorted: $0[0..<count]) }
        }
        var ratios: [Double] = []
        ratios.reserveCapacity(resamples)
        for _ in 0..<resamples {
            let mine = percentileOfResample(ours)
            let theirs = percentileOfResample(theirs)
            if theirs > 0 { ratios.append(mine / theirs) }
        }
        guard ratios.count > 1 else { return nil }
        let mean = ratios.reduce(0, +) / Double(ratios.count)
        let variance = ratios.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(ratios.count - 1)
        return variance.squareRoot()
    }

    /// The median: the middle value, or the mean of the two middle ones; NaN for no value. Infinity (a figure
    /// that never came) sorts last like any larger value.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The system calls in an `strace -f` log (`PID name(arguments) = result` lines) after the peer wrote its
    /// `start` line to standard output and before it wrote its `end` line; nil when the log lacks either. A call
    /// that strace shows in two parts (`<unfinished ...>`, then `<... name resumed>`) counts once.
    static func syscallsBetween(_ log: String, start: String, end: String) -> Int? {
        let lines = log.split(whereSeparator: \.isNewline)
        let marker = { (text: String) in
            lines.firstIndex { $0.contains("write(1, \"\(text)") }
        }
        guard let first = marker(start), let last = marker(end), first < last else { return nil }
        return lines[(first + 1)..<last].filter { line in
            !line.contains("resumed>") && !line.contains("+++ ") && !line.contains("--- ")
        }.count
    }
}

/// A plot of motor levels over time for several sources, one panel per motor, as a standalone SVG document.
struct OverlayPlot {
    struct Line {
        var label: String
        var color: String
        var series: LevelSeries
    }

    var title: String
    var length: Double
    var lines: [Line]

    static let width = 720.0
    static let panelHeight = 150.0
    static let margin = 40.0

    var svg: String {
        let height = 2 * Self.panelHeight + 3 * Self.margin
        var text = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(height))" \
            font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Self.margin)" y="16" font-size="13">\(Self.escaped(title))</text>

            """
        for (panel, motor) in ["strong (low-frequency) motor", "weak (high-frequency) motor"].enumerated() {
            let top = Self.margin + Double(panel) * (Self.panelHeight + Self.margin)
            text += axes(top: top, label: motor)
            for line in lines {
                text += polyline(line, top: top, strong: panel == 0)
            }
        }
        for (index, line) in lines.enumerated() {
            let x = Self.margin + Double(index) * 160
            text +=
                "<rect x=\"\(x)\" y=\"\(height - 18)\" width=\"12\" height=\"3\" fill=\"\(line.color)\"/>"
                + "<text x=\"\(x + 16)\" y=\"\(height - 13)\">\(Self.escaped(line.label))</text>\n"
        }
        return text + "</svg>\n"
    }

    private func x(_ time: Double) -> Double {
        Self.margin + (Self.width - 2 * Self.margin) * min(max(time / length, 0), 1)
    }

    private func axes(top: Double, label: String) -> String {
        let bottom = top + Self.panelHeight
        return """
            <text x="\(Self.margin)" y="\(top - 6)">\(label), 0...1 over \(String(format: "%.2f", length)) s</text>
            <rect x="\(Self.margin)" y="\(top)" width="\(Self.width - 2 * Self.margin)" height="\(Self.panelHeight)" \
            fill="none" stroke="#999"/>
            <text x="\(Self.margin - 4)" y="\(bottom)" text-anchor="end">0</text>
            <text x="\(Self.margin - 4)" y="\(top + 8)" text-anchor="end">1</text>

            """
    }

    /// The series as steps: each level held until the next point, clipped to the plot's length.
    private func polyline(_ line: Line, top: Double, strong: Bool) -> String {
        let y = { (level: Double) in top + Self.panelHeight * (1 - min(max(level, 0), 1)) }
        var coordinates: [String] = ["\(x(0)),\(y(0))"]
        var previous = 0.0
        for point in line.series.points where point.time <= length {
            let level = strong ? point.strong : point.weak
            if level == previous { continue }
            coordinates.append(String(format: "%.1f,%.1f", x(point.time), y(previous)))
            coordinates.append(String(format: "%.1f,%.1f", x(point.time), y(level)))
            previous = level
        }
        coordinates.append(String(format: "%.1f,%.1f", x(length), y(previous)))
        return "<polyline fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"1.2\" points=\""
            + coordinates.joined(separator: " ") + "\"/>\n"
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
