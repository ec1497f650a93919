// The load soak: 8 virtual pads, an engine bound to each with 4 players restarting patterns on it, and pads unplugged
// and plugged back in at random (seeded) times. Descriptors, effect slots and resident memory are sampled while it
// runs and must stay flat; every engine must recover from every replug and keep playing; at the end every engine is
// stopped and every pad destroyed, and nothing may be left. `haptics-kernel-tests --soak SECONDS` runs it at length
// (`make soak`); the suite below runs a short smoke of the same code in `make test`. docs/reliability.md ("Load").
import AHAPFiles
import Foundation
import HapticTestDevices
import LinuxHaptics

enum SoakSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "soak", requires: [.uinput],
        tests: [KernelTest(name: "soak/8-pads-32-players-unplugged-smoke", body: smoke)])

    /// Long enough for several unplugs and replugs and every player's restarts, short enough for `make test`.
    static let smokeSeconds = 12.0
    static let smokeMinimumUnplugs = 2

    static func smoke() async throws {
        var options = SoakOptions(seconds: smokeSeconds, seed: SoakOptions.randomSeed())
        options.indent = "  "
        let report = try await SoakRun.run(options)
        try require(
            report.unplugs >= smokeMinimumUnplugs,
            "the smoke unplugged \(report.unplugs) pads, fewer than \(smokeMinimumUnplugs)")
        try require(report.problems.isEmpty, report.problems.joined(separator: "; "))
    }
}

/// What one soak does.
struct SoakOptions {
    var pads = 8
    var playersPerPad = 4
    var seconds: Double
    var seed: UInt64
    /// Put before every line printed (the smoke's lines sit under its test name).
    var indent = ""

    /// About twenty samples whatever the length, none closer than 2 s.
    var sampleInterval: Double { max(2, seconds / 20) }
    /// Samples before this are the warm-up: caches, the runtime's threads and the allocator's arenas fill.
    var warmUp: Double { max(sampleInterval, seconds / 10) }
    /// The mean gap between two unplugs (each of a pad chosen at random among those plugged in).
    var meanUnplugGap: Double { min(3, seconds / 5) }
    /// Memory is judged on runs this long and longer; a shorter run is all warm-up for caches and the allocator.
    static let residentJudgedFrom = 60.0

    static func randomSeed() -> UInt64 { UInt64.random(in: 1...999_999) }
}

/// A pattern the players choose from.
struct SoakPattern {
    let name: String
    let pattern: HapticPattern

    /// Corpus patterns longer than this are left out: a play must end often enough to be counted.
    static let longestSeconds = 3.0

    /// `Haptics/*.ahap` (the repository's assets, always in the bench), and the corpus when the guest has it.
    static func load() throws -> [SoakPattern] {
        let assets = ((try? FileManager.default.contentsOfDirectory(atPath: "Haptics")) ?? [])
            .filter { $0.hasSuffix(".ahap") }.sorted().map { URL(fileURLWithPath: "Haptics/" + $0) }
        let corpus = (try? EngineSuite.corpusFiles()) ?? []
        let patterns = (assets + corpus).compactMap { url -> SoakPattern? in
            guard let pattern = try? HapticPattern(contentsOf: url),
                pattern.duration > 0, pattern.duration <= longestSeconds
            else { return nil }
            return SoakPattern(name: url.lastPathComponent, pattern: pattern)
        }
        guard patterns.count > corpus.count || !assets.isEmpty else {
            throw TestFailure(reason: "no patterns: Haptics/*.ahap is not in the working directory")
        }
        return patterns
    }
}

/// What a soak measured and what is wrong with it (nothing, when flat).
struct SoakReport {
    var samples: [SoakSample]
    var unplugs: Int
    var plays: Int
    var problems: [String]
}
