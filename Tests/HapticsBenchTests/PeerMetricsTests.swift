import Foundation
import Testing

@testable import haptics_bench

@Suite struct PeerMetricsTests {
    static let ramp = LevelSeries(
        csv: """
            time,strong,weak
            0,0,0
            0.1,0.5,0.25
            0.2,1,0.5
            0.3,0,0
            """)

    @Test func csvRowsBecomeSteps() {
        #expect(Self.ramp.points.count == 4)
        #expect(Self.ramp.levels(at: -1) == (0, 0))
        #expect(Self.ramp.levels(at: 0.15) == (0.5, 0.25))
        #expect(Self.ramp.levels(at: 0.2) == (1, 0.5))
        #expect(Self.ramp.levels(at: 5) == (0, 0))
        #expect(Self.ramp.firstOutput == 0.1)
    }

    @Test func anIdenticalOutputHasNoError() {
        #expect(PeerMetrics.fidelityError(observed: Self.ramp, intended: Self.ramp, length: 0.4) == 0)
    }

    @Test func aLateButOtherwiseIdenticalOutputHasNoError() {
        // Latency is its own figure: the output is lined up on its first motion before it is compared.
        let late = Self.ramp.shifted(by: 0.037)
        #expect(PeerMetrics.fidelityError(observed: late, intended: Self.ramp, length: 0.4) < 1e-12)
    }

    @Test func theErrorIsTheRootMeanSquareOverBothMotorsAndEveryMillisecond() {
        // The strong motor at 1 for 0.1 s, then off, where 0.5 is intended throughout: 0.5 off on one motor at
        // every one of 200 steps, none on the other.
        let burst = LevelSeries(points: [.init(time: 0, strong: 1, weak: 0), .init(time: 0.1, strong: 0, weak: 0)])
        let intended = LevelSeries(points: [.init(time: 0, strong: 0.5, weak: 0)])
        let error = PeerMetrics.fidelityError(observed: burst, intended: intended, length: 0.2, search: 0)
        #expect(abs(error - (0.25 * 200 / 400).squareRoot()) < 1e-9)
    }

    @Test func aFirstCommandThatLeftLateDoesNotShiftTheRest() {
        // The first step reached the device 10 ms late, everything after it on time: lined up on the first
        // output alone, the rest would be 10 ms early; the best offset nearby finds the schedule again.
        let intended = LevelSeries(points: [
            .init(time: 0.1, strong: 1, weak: 0), .init(time: 0.2, strong: 0, weak: 0),
            .init(time: 0.3, strong: 1, weak: 1),
            .init(time: 0.4, strong: 0, weak: 0),
        ])
        let observed = LevelSeries(points: [
            .init(time: 0.11, strong: 1, weak: 0), .init(time: 0.2, strong: 0, weak: 0),
            .init(time: 0.3, strong: 1, weak: 1), .init(time: 0.4, strong: 0, weak: 0),
        ])
        let fitted = PeerMetrics.fidelityError(observed: observed, intended: intended, length: 0.5)
        let firstOnly = PeerMetrics.fidelityError(observed: observed, intended: intended, length: 0.5, search: 0)
        #expect(fitted < firstOnly)
        #expect(abs(fitted - (10.0 / 1000).squareRoot()) < 1e-9)
    }

    @Test func geometricMeanOfRatios() {
        #expect(PeerMetrics.geometricMean([]) == nil)
        #expect(abs((PeerMetrics.geometricMean([0.5, 2]) ?? 0) - 1) < 1e-12)
        #expect(abs((PeerMetrics.geometricMean([0.25, 1, 4, 1]) ?? 0) - 1) < 1e-12)
        // A perfect figure counts as the floor, not as zero for the whole mean.
        #expect((PeerMetrics.geometricMean([0, 1]) ?? 0) > 0)
        #expect(PeerMetrics.geometricMean([.nan, -1]) == nil)
    }

    /// `count` samples spread like an exponential distribution's (1 + its quantiles): a long tail, like a latency's.
    static func tailed(_ count: Int) -> [Double] {
        (0..<count).map { (index: Int) -> Double in
            let quantile = (Double(index) + 0.5) / Double(count)
            return 1 - log(1 - quantile)
        }
    }

    @Test func aResampledSpreadIsZeroForARunWithoutScatterAndNilForAnEmptySide() {
        let same = Array(repeating: 0.05, count: 400)
        #expect(PeerMetrics.resampledSpread(ours: same, theirs: same, percentile: 99) == 0)
        #expect(PeerMetrics.resampledSpread(ours: [], theirs: same, percentile: 99) == nil)
        #expect(PeerMetrics.resampledSpread(ours: same, theirs: [], percentile: 50) == nil)
    }

    @Test func aResampledSpreadIsTheSameForTheSameSamplesAndWiderAtTheTailThanAtTheMiddle() {
        let ours = Self.tailed(400)
        let theirs = Self.tailed(400).map { $0 * 1.1 }
        let p99 = PeerMetrics.resampledSpread(ours: ours, theirs: theirs, percentile: 99, resamples: 300)
        #expect(
            p99 != nil && p99 == PeerMetrics.resampledSpread(ours: ours, theirs: theirs, percentile: 99, resamples: 300)
        )
        let p50 = PeerMetrics.resampledSpread(ours: ours, theirs: theirs, percentile: 50, resamples: 300) ?? .nan
        #expect(p50 > 0 && p50 < (p99 ?? 0) / 2)
    }

    @Test func aRunFourTimesAsLongAboutHalvesTheResampledSpreadOfItsP99() {
        let spread = { (count: Int) in
            PeerMetrics.resampledSpread(
                ours: Self.tailed(count), theirs: Self.tailed(count), percentile: 99, resamples: 300) ?? .nan
        }
        let shrink = spread(1600) / spread(400)
        // The standard error of a percentile falls as one over the square root of the count: 0.5 here.
        #expect(shrink > 0.35 && shrink < 0.7)
    }

    @Test func syscallsAreCountedBetweenTheStartAndEndLines() {
        let log = """
            101 execve("/usr/local/bin/sdl-peer", ["sdl-peer"], 0x7ffc) = 0
            101 write(1, "start 123\\n", 10) = 10
            101 ioctl(3, EVIOCSFF, {type=FF_RUMBLE, id=0}) = 0
            102 futex(0x7f00, FUTEX_WAIT_PRIVATE, 0, NULL <unfinished ...>
            101 write(3, "\\0\\0", 24) = 24
            102 <... futex resumed>) = 0
            101 --- SIGCHLD {si_signo=SIGCHLD} ---
            101 clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, {tv_sec=5}, NULL) = 0
            101 write(1, "end 456\\n", 8) = 8
            101 exit_group(0) = ?
            101 +++ exited with 0 +++
            """
        #expect(PeerMetrics.syscallsBetween(log, start: "start ", end: "end ") == 4)
        #expect(PeerMetrics.syscallsBetween(log, start: "playing ", end: "played") == nil)
    }

    @Test func theOverlayDrawsOnePolylinePerSourceAndMotor() {
        let plot = OverlayPlot(
            title: "a <pattern> & more", length: 0.4,
            lines: [
                .init(label: "intended", color: "#999999", series: Self.ramp),
                .init(label: "ours", color: "#1b9e77", series: Self.ramp.shifted(by: 0.01)),
            ])
        let svg = plot.svg
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 4)
        #expect(svg.contains("a &lt;pattern> &amp; more"))
    }
}
