import Foundation
import Testing
@testable import AHAP

@Suite struct JSONReaderTests {
    private func parse(_ text: String, limits: AHAPLimits = .default) throws -> JSONValue {
        let data = text.utf8Data
        return try data.withUnsafeBytes { bytes in try JSONReader.parse(bytes, limits: limits).value }
    }

    @Test func numbersConvertExactlyLikeTheStandardLibrary() throws {
        var random = SeededGenerator(seed: 42)
        var samples = [
            "0", "-0", "1", "0.1", "0.30000000000000004", "123456789012345678901234567890", "1e-7",
            "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "9007199254740993",
            "0.0018140589569160999", "1E+2", "-12.5e-3", "0.000000000000000000000000001",
        ]
        for _ in 0..<5_000 {
            let value = Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)
            samples.append(value.description)
            samples.append(String(Double.random(in: 0...1, using: &random)))
            samples.append(
                String(
                    format: "%.*f", Int.random(in: 0...17, using: &random),
                    Double.random(in: -100...100, using: &random)))
        }
        for text in samples {
            guard case .number(let ours) = try parse(text) else {
                Issue.record("\(text) did not parse as a number")
                continue
            }
            let expected = try #require(Double(text))
            #expect(ours.bitPattern == expected.bitPattern, "\(text): \(ours) vs \(expected)")
        }
    }

    /// An exponent longer than the reader accumulates, brought back near 1 by a long fraction, is converted from
    /// the whole text: "0.(100,000 zeros)1e1000001" is 1e900000, beyond a `Double`, and
    /// "0.(100,000 zeros)1e100001" is 1 (until 7 December, under a raised number limit, the first read as 0.1).
    @Test func aLongExponentIsConvertedWholeWhateverTheFractionBeforeIt() throws {
        var limits = AHAPLimits.default
        limits.maximumNumberBytes = 1 << 20
        let fraction = "0." + String(repeating: "0", count: 100_000) + "1"
        #expect {
            try parse(fraction + "e1000001", limits: limits)
        } throws: { error in
            (error as? JSONReadError)?.code == .nonFiniteNumber
        }
        #expect(try parse(fraction + "e100001", limits: limits) == .number(1))
        #expect(try parse(fraction + "e0000100001", limits: limits) == .number(1))
    }

    @Test func rejectsWhatJSONForbids() {
        for text in [
            "01", "1.", ".5", "+1", "0x10", "1e", "-", "[1,,2]", "{\"a\" 1}", "{a:1}", "'a'", "[1] x", "", "  ",
            "tru", "nul", "[", "{\"a\":1,,}",
        ] {
            #expect(throws: JSONReadError.self, "\(text)") { try parse(text) }
        }
    }

    @Test func acceptsJSON5TrailingCommasAndCommentsAndSaysSo() throws {
        let text = "// header\n{\"a\": [1, 2,], /* note */ \"b\": {\"c\": true,},}"
        let data = text.utf8Data
        let (value, leniencies, omitted) = try data.withUnsafeBytes { bytes in
            try JSONReader.parse(bytes, limits: .default)
        }
        #expect(omitted == 0)
        #expect(leniencies.count == 5)
        #expect(leniencies.map(\.path.formatted) == ["", "a", "", "b", ""])
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["a", "b"])
        #expect(members.first?.value == .array([.number(1), .number(2)]))
    }

    @Test func stringEscapesDecode() throws {
        let value = try parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\n\té\u{1F600}"))
    }

    @Test func writerRoundTripsStrings() throws {
        let original = JSONValue.object([JSONMember(key: "k\"\\\n\u{1}é", value: .string("\u{0}\t\u{1F600}"))])
        let bytes = try JSONWriter.encode(original, prettyPrinted: false)
        let again = try Data(bytes).withUnsafeBytes { try JSONReader.parse($0, limits: .default).value }
        #expect(again == original)
    }

    @Test func quotedForMessageEscapesEveryHiddenCharacterAndReadsBackAsTheSameJSONString() throws {
        let original = "a\"b\\c\n\u{1B}[1m\u{7F}\u{85}\u{A0}\u{200B}\u{202E}\u{2029}\u{E0001}\u{E000} é😀 d"
        let quoted = original.quotedForMessage
        #expect(
            quoted
                == #""a\"b\\c\n\u001b[1m\u007f\u0085\u00a0\u200b\u202e\u2029\udb40\udc01\ue000 é😀 d""#)
        let again = try Data(quoted.utf8).withUnsafeBytes { try JSONReader.parse($0, limits: .default).value }
        #expect(again == .string(original))
        #expect("Intensity é".shownInMessage == "Intensity é")
        #expect("a\u{2028}b".shownInMessage == #""a\u2028b""#)
    }

    @Test func pathsFormatLikeTheIssueSays() {
        let path: [JSONPathComponent] = [
            .key("Pattern"), .index(3), .key("Event"), .key("EventParameters"), .index(1), .key("ParameterValue"),
        ]
        #expect(path.formatted == "Pattern[3].Event.EventParameters[1].ParameterValue")
        #expect([JSONPathComponent.key("Pattern"), .index(0), .key("odd.key")].formatted == #"Pattern[0]["odd.key"]"#)
        #expect([JSONPathComponent.key("Pattern"), .key("a\u{202E}b\n")].formatted == #"Pattern["a\u202eb\n"]"#)
        #expect([JSONPathComponent.key("back\\slash")].formatted == #"["back\\slash"]"#)
    }
}
