import Foundation
import Testing
@testable import AHAP

/// Thousands of random mutations of the fixtures (and of the corpus, when `AHAP_CORPUS` names it): the reader must
/// answer every one (load or report), never crash, and a mutant that loads must still round-trip.
@Suite struct MutationTests {
    /// Bytes that steer mutations towards the JSON grammar's edges.
    private static let interestingBytes = Array(#"{}[],:"\-+.eE0123456789 tfn/*NaIy"#.utf8) + [0x00, 0x0A, 0xFF, 0xC3]

    @Test func byteMutationsOfTheFixturesNeverCrash() throws {
        try Self.expectByteMutationsAnswered(try Fixtures.files())
    }

    @Test(.corpus) func byteMutationsOfTheCorpusNeverCrash() throws {
        try Self.expectByteMutationsAnswered(try Corpus.files())
    }

    @Test func structureMutationsOfTheFixturesNeverCrash() throws {
        try Self.expectStructureMutationsAnswered(try Fixtures.files())
    }

    @Test(.corpus) func structureMutationsOfTheCorpusNeverCrash() throws {
        try Self.expectStructureMutationsAnswered(try Corpus.files())
    }

    static func expectByteMutationsAnswered(_ files: [URL]) throws {
        let corpus = try files.map { try Data(contentsOf: $0) }
        var random = SeededGenerator(seed: 0xB17E)
        var outcomes = (loaded: 0, rejected: 0)
        for iteration in 0..<4_000 {
            var bytes = [UInt8](corpus[iteration % corpus.count])
            for _ in 0..<Int.random(in: 1...4, using: &random) { mutate(&bytes, using: &random) }
            let report = AHAPValidator.validate(data: Data(bytes))
            if let pattern = report.pattern {
                outcomes.loaded += 1
                #expect(try HapticPattern(data: pattern.ahapData()) == pattern)
            } else {
                outcomes.rejected += 1
                #expect(!report.errors.isEmpty)
            }
        }
        // Both outcomes must occur, or the mutations are too weak (or too strong) to test anything.
        #expect(outcomes.loaded > 100 && outcomes.rejected > 100, "\(outcomes)")
    }

    static func expectStructureMutationsAnswered(_ files: [URL]) throws {
        let trees = try files.map { url -> Any in try JSONSerialization.jsonObject(with: Data(contentsOf: url)) }
        var random = SeededGenerator(seed: 0x5EED)
        for iteration in 0..<2_000 {
            var tree = trees[iteration % trees.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) { tree = mutateTree(tree, using: &random) }
            guard let dictionary = tree as? [String: Any] else { continue }
            let report = AHAPValidator.validate(dictionary: dictionary)
            #expect(report.loads || !report.errors.isEmpty)
            // The same mutant as text takes the other path through the reader.
            let text = try JSONSerialization.data(withJSONObject: dictionary)
            #expect(AHAPValidator.validate(data: text).loads == report.loads)
        }
    }

    private static func mutate(_ bytes: inout [UInt8], using random: inout SeededGenerator) {
        guard !bytes.isEmpty else {
            bytes.append(Self.interestingBytes.randomElement(using: &random) ?? 0)
            return
        }
        let index = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
        case 1: bytes[index] = Self.interestingBytes.randomElement(using: &random) ?? 0
        case 2: bytes.remove(at: index)
        case 3: bytes.insert(Self.interestingBytes.randomElement(using: &random) ?? 0, at: index)
        case 4:
            let end = Swift.min(bytes.count, index + Int.random(in: 1...64, using: &random))
            bytes.removeSubrange(index..<end)
        default:
            let end = Swift.min(bytes.count, index + Int.random(in: 1...64, using: &random))
            bytes.insert(contentsOf: bytes[index..<end], at: index)
        }
    }

    private static var replacementValues: [Any] {
        [
            "HapticTransient", "HapticContinuous", "AudioCustom", "Nonsense", -1.0, 0.0, 0.5, 2.0, 1e300, true,
            [Any](), [String: Any](), ["Time": 0.0], [["ParameterID": "HapticIntensity"]],
        ]
    }

    /// Replaces, deletes or duplicates one value somewhere in the tree.
    private static func mutateTree(_ tree: Any, using random: inout SeededGenerator) -> Any {
        if var dictionary = tree as? [String: Any], let key = dictionary.keys.sorted().randomElement(using: &random) {
            switch Int.random(in: 0..<5, using: &random) {
            case 0: dictionary[key] = nil
            case 1: dictionary[key] = Self.replacementValues.randomElement(using: &random)
            case 2: dictionary[key + "s"] = dictionary[key]
            default: dictionary[key] = mutateTree(dictionary[key] ?? 0, using: &random)
            }
            return dictionary
        }
        if var array = tree as? [Any], !array.isEmpty {
            let index = Int.random(in: 0..<array.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: array.remove(at: index)
            case 1: array[index] = Self.replacementValues.randomElement(using: &random) ?? 0
            default: array[index] = mutateTree(array[index], using: &random)
            }
            return array
        }
        return Self.replacementValues.randomElement(using: &random) ?? 0
    }
}
