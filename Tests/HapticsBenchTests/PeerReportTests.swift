import Testing

@testable import haptics_bench

@Suite struct PeerReportTests {
    /// One device where every latency path took the same time in every round, and every other figure was measured.
    static func figures(latency: [LatencyPath: Double]) -> DeviceFigures {
        var figures = DeviceFigures(kind: .virtualPad)
        for (path, milliseconds) in latency { figures.latency[path] = Array(repeating: milliseconds, count: 10) }
        figures.fidelity = [.ours: ["a.ahap": 0.02], .sdlRumble: ["a.ahap": 0.08], .sdlHaptic: ["a.ahap": 0.04]]
        figures.writesPerSecond = [.ours: 30, .sdlRumble: 20, .sdlHaptic: 40]
        figures.cpuPerSecond = [.ours: 5, .sdlRumble: 20, .sdlHaptic: 10]
        figures.idleWakeups = [.ours: 0, .sdlRumble: 1, .sdlHaptic: 2]
        return figures
    }

    static let paired: [LatencyPath: Double] = [
        .sdlRun: 0.1, .oursManagerPrepared: 0.2, .oursEnginePrepared: 0.05, .sdlRumble: 1, .oursStart: 0.25,
    ]

    /// The line's `key=value` fields after `peers:`.
    static func fields(_ line: String) -> [(key: String, value: String)] {
        line.split(separator: " ").dropFirst().map { field in
            let parts = field.split(separator: "=", maxSplits: 1)
            return (String(parts.first ?? ""), parts.count == 2 ? String(parts[1]) : "")
        }
    }

    @Test func eachLatencyRatioPairsOursWithItsSDLCounterpartAndNamesThePairAndTheDevice() {
        let line = PeerReport.summary([Self.figures(latency: Self.paired)]).line
        let values = Dictionary(uniqueKeysWithValues: Self.fields(line).map { ($0.key, $0.value) })
        // Our prepared paths over SDL's run of an effect uploaded once; our ordinary start over SDL's rumble call.
        for percentile in [50, 99] {
            #expect(values["latency-p\(percentile)-manager-prepared-vs-sdl-run"] == "2.000@virtual-pad")
            #expect(values["latency-p\(percentile)-engine-prepared-vs-sdl-run"] == "0.500@virtual-pad")
            #expect(values["latency-p\(percentile)-start-vs-sdl-rumble"] == "0.250@virtual-pad")
        }
    }

    static let latencyKeys = [
        "latency-p50-manager-prepared-vs-sdl-run", "latency-p99-manager-prepared-vs-sdl-run",
        "latency-p50-engine-prepared-vs-sdl-run", "latency-p99-engine-prepared-vs-sdl-run",
        "latency-p50-start-vs-sdl-rumble", "latency-p99-start-vs-sdl-rumble",
    ]

    @Test func theFullLineIsKeyValueFieldsOfNumbersInAFixedOrder() {
        let summary = PeerReport.summary([Self.figures(latency: Self.paired)])
        #expect(summary.line.hasPrefix("peers: latency-p50-"))
        #expect(summary.complete)
        let fields = Self.fields(summary.line)
        #expect(
            fields.map(\.key)
                == Self.latencyKeys + [
                    "fidelity", "writes", "fidelity-vs-sdl-haptic", "writes-vs-sdl-haptic", "cpu", "idle-wakeups",
                ])
        let numbers = fields.flatMap { $0.value.split(separator: "@").first!.split(separator: "/") }.map { Double($0) }
        #expect(numbers.count == 13 && numbers.allSatisfy { $0?.isFinite == true })
        // Ours over SDL's better API, figure by figure: fidelity 0.02 / 0.04 (haptic), writes 30 / 20 (rumble), CPU
        // 5 / 10; and over SDL's haptic API for both fidelity and writes: 0.02 / 0.04, 30 / 40.
        #expect(
            summary.line.hasSuffix(
                "fidelity=0.500 writes=1.500 fidelity-vs-sdl-haptic=0.500 writes-vs-sdl-haptic=0.750 cpu=0.500 "
                    + "idle-wakeups=0.000/1.000"))
    }

    @Test func aPlaybackOnlyLineHasNoLatencyAndIsCompleteWithoutIt() {
        let summary = PeerReport.summary([Self.figures(latency: [:])], playbackOnly: true)
        #expect(summary.complete)
        #expect(summary.line.hasPrefix("peers: fidelity=0.500 writes=1.500 fidelity-vs-sdl-haptic=0.500"))
        #expect(!summary.line.contains("latency"))
    }

    @Test func aLatencyPairWithAnUnmeasuredSideIsADashAndTheLineIncomplete() {
        var latency = Self.paired
        latency[.sdlRumble] = nil
        let summary = PeerReport.summary([Self.figures(latency: latency)])
        #expect(summary.line.contains("latency-p99-start-vs-sdl-rumble=- "))
        #expect(summary.line.contains("latency-p99-manager-prepared-vs-sdl-run=2.000@virtual-pad "))
        #expect(!summary.complete)
    }

    @Test func theLatencyOnlyLineHasTheLatencyRatiosAlone() {
        let summary = PeerReport.summary([Self.figures(latency: Self.paired)], latencyOnly: true)
        #expect(Self.fields(summary.line).map(\.key) == Self.latencyKeys)
        #expect(summary.complete)
    }

    @Test func eachLatencyRatioIsTheWorstDevicesAndNamesIt() {
        var slower = Self.paired
        slower[.oursManagerPrepared] = 0.3
        var second = Self.figures(latency: slower)
        second.kind = .xboxOneBluetooth
        let line = PeerReport.summary([Self.figures(latency: Self.paired), second]).line
        // 2 on the pad, 3 on the Xbox pad: the line holds the worse, where it was.
        #expect(line.contains("latency-p99-manager-prepared-vs-sdl-run=3.000@xbox-one-bt "))
        #expect(line.contains("latency-p99-engine-prepared-vs-sdl-run=0.500@virtual-pad "))
    }

    @Test func balancedOrderPutsEachItemAtEachPlaceAndAfterEachOtherEquallyOften() {
        for count in 1...7 {
            let items = Array(0..<count)
            let rows = count % 2 == 0 ? count : 2 * count
            let orders = (0..<rows).map { balancedOrder(items, round: $0) }
            var places: [[Int]: Int] = [:]
            var pairs: [[Int]: Int] = [:]
            for order in orders {
                #expect(order.sorted() == items, "round of \(count): \(order) is not an order of the items")
                for (place, item) in order.enumerated() { places[[item, place], default: 0] += 1 }
                for (before, after) in zip(order, order.dropFirst()) { pairs[[before, after], default: 0] += 1 }
            }
            #expect(places.count == count * count && Set(places.values).count == 1, "places, \(count) items")
            #expect(pairs.count == count * (count - 1) && Set(pairs.values).count <= 1, "pairs, \(count) items")
            // The design repeats after its rows.
            #expect(balancedOrder(items, round: rows + 1) == orders[1 % rows])
        }
        #expect(balancedOrder([String](), round: 4).isEmpty)
        // Over as many rounds as there are peers, each goes first once.
        #expect(
            Set((0..<Peer.allCases.count).map { balancedOrder(Peer.allCases, round: $0)[0] }) == Set(Peer.allCases))
    }

    @Test func theMedianTakesTheMiddleAndANeverSortsLast() {
        #expect(PeerMetrics.median([]).isNaN)
        #expect(PeerMetrics.median([3, 1, 2]) == 2)
        #expect(PeerMetrics.median([4, 1, 3, 2]) == 2.5)
        #expect(PeerMetrics.median([8, .infinity, 9]) == 9)
        #expect(PeerMetrics.median([.infinity, 8, .infinity]) == .infinity)
    }
}
