import Foundation
import Testing
@testable import AHAP

@Suite struct HostileInputTests {
    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        for opener in ["[", "{\"a\":"] {
            let json = String(repeating: opener, count: 200_000)
            let report = AHAPValidator.validate(data: json.utf8Data)
            #expect(report.errors.first?.code == .limitExceeded)
            #expect(report.errors.first?.message.contains("nesting") == true)
        }
    }

    @Test func aMillionEventsIsRejectedByTheSizeLimit() {
        var json = #"{"Version":1.0,"Pattern":["#
        let event = #"{"Event":{"Time":0,"EventType":"HapticTransient"}},"#
        json.reserveCapacity(event.utf8.count * 1_000_000 + 64)
        for _ in 0..<1_000_000 { json += event }
        json += #"{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(!report.loads)
        #expect(report.errors.map(\.code) == [.limitExceeded])
    }

    @Test func patternEntryLimitHoldsWithinTheSizeLimit() {
        // 100,001 empty entries fit in 400 KB; the entry limit, not the size limit, must stop them.
        let json = #"{"Version":1.0,"Pattern":["# + Array(repeating: "{}", count: 100_001).joined(separator: ",") + "]}"
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.errors.map(\.code) == [.limitExceeded])
        #expect(report.errors.first?.path == "Pattern")
    }

    @Test func valueCountLimitBoundsTheTree() {
        let limits = AHAPLimits(maximumJSONValues: 1_000)
        let json = "[" + Array(repeating: "0", count: 5_000).joined(separator: ",") + "]"
        let report = AHAPValidator.validate(data: json.utf8Data, limits: limits)
        #expect(report.errors.first?.code == .limitExceeded)
    }

    @Test func diagnosticsAreCappedWithASummary() {
        let entries = Array(repeating: #"{"Event":{"Time":0,"EventType":"HapticTransient","X":1}}"#, count: 3_000)
        let json = #"{"Version":1.0,"Pattern":["# + entries.joined(separator: ",") + "]}"
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.loads)
        #expect(report.diagnostics.count == AHAPLimits.default.maximumDiagnostics + 1)
        #expect(report.diagnostics.last?.code == .diagnosticsTruncated)
    }

    @Test func wideObjectsAreReadInLinearTime() {
        // 300,000 distinct keys in one event: a quadratic duplicate check would take minutes here.
        let keys = (0..<300_000).map { #""k\#($0)":0"# }.joined(separator: ",")
        let json = #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient","# + keys + "}}]}"
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.loads)
        #expect(report.diagnostics.last?.code == .diagnosticsTruncated)
    }

    @Test func endlessNumbersAreRefused() {
        let json =
            #"{"Version":1,"Pattern":[{"Event":{"Time":0."# + String(repeating: "1", count: 5_000_000)
            + #","EventType":"HapticTransient"}}]}"#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.errors.first?.code == .limitExceeded)
        #expect(report.errors.first?.path == "Pattern[0].Event.Time")
    }

    @Test func commentsInsideTrailingCommasGetTheirOwnLines() {
        // The comment is recorded before the comma that precedes it: positions must still be right.
        let report = AHAPValidator.validate(
            data: "{\"Version\":1,\"Pattern\":[{\"Event\":{\"Time\":0,\"EventType\":\"HapticTransient\"}},\n/* c */\n]}"
                .utf8Data)
        let lenient = report.diagnostics.filter { $0.code == .lenientSyntax }
        #expect(lenient.map(\.message) == ["comment (JSON5, not JSON)", "trailing comma before ']' (JSON5, not JSON)"])
        #expect(lenient.map(\.line) == [2, 1])
    }

    @Test func aMillionCommentsCostBoundedDiagnostics() {
        let json =
            String(repeating: "/**/", count: 1_000_000)
            + #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.loads)
        #expect(report.diagnostics.count == AHAPLimits.default.maximumDiagnostics + 1)
        #expect(report.diagnostics.last?.message.hasPrefix("999000 more problems") == true)
    }

    /// Found by fuzzing (docs/reliability.md): a thousand comments filled the diagnostics, the error after them was
    /// dropped, and the report neither loaded nor listed an error.
    @Test func anErrorPastTheDiagnosticsLimitIsStillListed() {
        let json =
            String(repeating: "/**/", count: 1_500)
            + #"{"Version":1,"Pattern":[{"Event":{"Time":-1,"EventType":"HapticTransient"}}]}"#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(!report.loads)
        #expect(report.errors.map(\.code) == [.negativeTime])
        #expect(report.diagnostics.count == AHAPLimits.default.maximumDiagnostics + 2)
        #expect(report.diagnostics.last?.message.hasPrefix("500 more problems") == true)
    }

    @Test func hugeStringsAndBadEscapesAreErrors() {
        let long = #"{"Version":1,"Metadata":{"Project":""# + String(repeating: "x", count: 70_000) + #""}}"#
        #expect(AHAPValidator.validate(data: long.utf8Data).errors.first?.code == .limitExceeded)
        for bad in [#"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#, "{\"a\":\"\u{1}\"}", #"{"a":"open"#] {
            #expect(AHAPValidator.validate(data: bad.utf8Data).errors.first?.code == .notJSON, "\(bad)")
        }
    }

    @Test func invalidUTF8AndBinaryNeverCrash() {
        var random = SeededGenerator(seed: 7)
        for length in [0, 1, 2, 3, 17, 1024] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let report = AHAPValidator.validate(data: Data(bytes))
            #expect(!report.loads)
        }
    }

    @Test func bytesThatAreNotUTF8AreAnErrorAtTheirLineAndColumnWhereverTheyStand() throws {
        let valid = Array(
            #"{"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}],"Metadata":{"Project":""#.utf8)
        let cases: [(name: String, bytes: [UInt8])] = [
            ("a byte that never starts a character", [0xFF]),
            ("a lone continuation byte", [0x80]),
            ("an overlong '/'", [0xC0, 0xAF]),
            ("an overlong three-byte form", [0xE0, 0x80, 0xAF]),
            ("a UTF-16 surrogate", [0xED, 0xA0, 0x80]),
            ("a code point above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
            ("a character cut short", [0xE2, 0x82]),
        ]
        for (name, bad) in cases {
            for (place, text) in [
                ("a value", valid + Array("ab".utf8) + bad + Array(#""}}"#.utf8)),
                ("an escaped value", valid + Array(#"\n"#.utf8) + bad + Array(#""}}"#.utf8)),
                ("a key", Array("{\n\"".utf8) + bad + Array(#"":1}"#.utf8)),
                ("a line comment", Array("{\n//".utf8) + bad + Array("\n}".utf8)),
                ("a block comment", Array("{\n/*".utf8) + bad + Array("*/}".utf8)),
            ] {
                let report = AHAPValidator.validate(data: Data(text))
                let error = try #require(report.errors.first, "\(name) in \(place)")
                #expect(error.code == .notJSON, "\(name) in \(place)")
                #expect(error.message.hasSuffix("is not UTF-8 here; an AHAP file is UTF-8 text"), "\(name) in \(place)")
                let lead = text.firstIndex(of: bad[0])! as Int
                let lineStart = (text[..<lead].lastIndex(of: 0x0A) ?? -1) + 1
                #expect(error.line == text[..<lead].count(where: { $0 == 0x0A }) + 1, "\(name) in \(place)")
                #expect(error.column == lead - lineStart + 1, "\(name) in \(place)")
            }
        }
        let wellFormed =
            "{\"Pattern\":[{\"Event\":{\"Time\":0,\"EventType\":\"HapticTransient\"}}],\"Metadata\":{\"Project\":\"é 😀 \u{10FFFF}\"}} // ✓\n/* ü */"
        let report = AHAPValidator.validate(data: wellFormed.utf8Data)
        #expect(report.errors.isEmpty)
        #expect(try HapticPattern(data: wellFormed.utf8Data).metadata?.entries["Project"] == "é 😀 \u{10FFFF}")
    }

    @Test func aUTF16FileIsNamedAsSuch() {
        let text = #"{"Pattern":[]}"#
        for (order, bom) in [("little-endian", [UInt8(0xFF), 0xFE]), ("big-endian", [0xFE, 0xFF])] {
            let units = text.utf16.flatMap { unit -> [UInt8] in
                let (high, low) = (UInt8(unit >> 8), UInt8(unit & 0xFF))
                return order == "little-endian" ? [low, high] : [high, low]
            }
            let error = AHAPValidator.validate(data: Data(bom + units)).errors.first
            #expect(error?.code == .notJSON, "\(order)")
            #expect(error?.message == "the text is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8")
            #expect(error?.line == 1 && error?.column == 1)
        }
    }

    @Test func aCharacterOutsideAStringIsNamedNotGivenAsAByte() {
        let curly = AHAPValidator.validate(data: "{\u{201C}Version\u{201D}:1}".utf8Data).errors.first
        #expect(curly?.message.contains("'\u{201C}' (U+201C)") == true, "\(String(describing: curly))")
        let hidden = AHAPValidator.validate(data: "{\u{200B}}".utf8Data).errors.first
        #expect(hidden?.message.contains("U+200B") == true, "\(String(describing: hidden))")
        #expect(hidden?.message.contains("\u{200B}") == false)
    }

    @Test func dictionaryInputIsBoundedAndTyped() {
        var nested: Any = [String: Any]()
        for _ in 0..<100 { nested = ["a": nested] }
        let deep = AHAPValidator.validate(dictionary: ["Pattern": nested])
        #expect(deep.errors.first?.code == .limitExceeded)
        let nan = AHAPValidator.validate(dictionary: [
            "Version": 1.0, "Pattern": [["Event": ["Time": Double.nan, "EventType": "HapticTransient"]]],
        ])
        #expect(nan.errors.first?.code == .nonFiniteNumber)
        #expect(nan.errors.first?.path == "Pattern[0].Event.Time")
        let odd = AHAPValidator.validate(dictionary: [
            "Version": 1.0, "Pattern": [["Event": ["Time": Date(), "EventType": "HapticTransient"]]],
        ])
        #expect(odd.errors.first?.code == .wrongType)
    }

    /// A dictionary nests as deep as text may, and no deeper: the top dictionary is the first level, as the top
    /// object of a text is (until 7 December a dictionary could hold one empty array more than text).
    @Test func dictionariesAndTextAreRefusedAtTheSameDepth() {
        let event: [String: Any] = ["Time": 0.0, "EventType": "HapticTransient"]
        for levels in [32, 33] {
            // The document, then `levels - 1` arrays under an unknown key, the innermost empty.
            var nested: Any = [Any]()
            for _ in 0..<(levels - 2) { nested = [nested] }
            let dictionary = AHAPValidator.validate(dictionary: [
                "Version": 1.0, "Pattern": [["Event": event]], "X": nested,
            ])
            let arrays = String(repeating: "[", count: levels - 1) + String(repeating: "]", count: levels - 1)
            let text = AHAPValidator.validate(
                data: #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}],"X":\#(arrays)}"#
                    .utf8Data)
            #expect(dictionary.loads == (levels == 32), "\(levels) levels: \(dictionary.diagnostics)")
            #expect(text.loads == dictionary.loads, "\(levels) levels: \(text.diagnostics)")
            #expect(dictionary.errors.map(\.code) == text.errors.map(\.code))
        }
    }

    /// Every Swift number type is a number in a dictionary, as Core Haptics takes each through `NSNumber` (until 7
    /// December `Int8`, `Int16`, `UInt8`, `UInt16`, `Float16`, `CGFloat` and `Decimal` had "no AHAP meaning").
    @Test func everySwiftNumberTypeIsANumberInDictionaries() throws {
        let values: [Any] = [
            Int8(1), Int16(1), Int32(1), Int64(1), Int(1), UInt8(1), UInt16(1), UInt32(1), UInt64(1), UInt(1),
            Float16(0.5), Float(0.5), Double(0.5), CGFloat(0.5), Decimal(string: "0.1")!,
        ]
        let expected: [Double] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.1]
        for (value, number) in zip(values, expected) {
            let pattern = try HapticPattern(dictionary: [
                "Version": 1, "Pattern": [["Event": ["Time": value, "EventType": "HapticTransient"]]],
            ])
            #expect(pattern.events.first?.relativeTime == number, "\(type(of: value))")
        }
        let notANumber = AHAPValidator.validate(dictionary: [
            "Version": 1, "Pattern": [["Event": ["Time": Decimal.nan, "EventType": "HapticTransient"]]],
        ])
        #expect(notANumber.errors.map(\.code) == [.nonFiniteNumber])
    }

    @Test func foundationNumbersAreAcceptedInDictionaries() throws {
        let dictionary: [String: Any] = [
            "Version": NSNumber(value: 1.0),
            "Pattern": [
                [
                    "Event": [
                        "Time": NSNumber(value: 0.5), "EventType": "HapticTransient",
                        "EventParameters": [
                            ["ParameterID": "HapticIntensity", "ParameterValue": NSNumber(value: 0.25)]
                        ],
                    ]
                ]
            ],
        ]
        let pattern = try HapticPattern(dictionary: dictionary)
        #expect(pattern.events.first?.relativeTime == 0.5)
        #expect(pattern.events.first?.intensity == 0.25)
    }
}
