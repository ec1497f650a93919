// A small JSON reader for AHAP: RFC 8259 JSON plus the two JSON5 liberties real AHAP files need (trailing commas,
// which Apple's own samples contain, and comments), with hard limits on size, depth and value count so hostile
// input ends in an error instead of a crash or unbounded memory. Foundation's JSONSerialization accepts JSON5 on
// Linux too, but it reports neither the JSON path nor the kind of leniency used, and it allocates a class per
// value; the validator wants both the path and speed (`make bench` compares the two).

/// A parsed JSON value. Objects keep their members in file order, duplicates included, so the validator can
/// report duplicate and unknown keys by position. The CLI writes its own JSON with it too (`JSONWriter`).
package enum JSONValue: Sendable, Equatable {
    case object([JSONMember])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    /// What the value is, in words, for "expected a number, found a string" messages.
    package var kindName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

package struct JSONMember: Sendable, Equatable {
    package var key: String
    package var value: JSONValue

    package init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// One step of a JSON path: a key of an object or an index into an array.
package enum JSONPathComponent: Sendable, Hashable {
    case key(String)
    case index(Int)
}

extension Array where Element == JSONPathComponent {
    /// The dotted form used in messages: `Pattern[3].Event.EventParameters[1].ParameterValue`. Keys that would
    /// make the path ambiguous (dots, brackets, quotes, backslashes, spaces, empty) or hold a hidden character are
    /// written as escaped JSON strings in brackets (`String.quotedForMessage`).
    var formatted: String {
        var text = ""
        for component in self {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                let plain =
                    !key.isEmpty
                    && key.unicodeScalars.allSatisfy { scalar in
                        !Self.quotedKeyScalars.contains(scalar) && !scalar.isHidden
                    }
                if plain {
                    text += text.isEmpty ? key : ".\(key)"
                } else {
                    text += "[\(key.quotedForMessage)]"
                }
            }
        }
        return text
    }

    /// Scalars that make a key be written quoted in a path: the path's own punctuation, JSON's escapes, a space.
    private static let quotedKeyScalars: Set<Unicode.Scalar> = [".", "[", "]", "\"", "\\", " "]
}

/// Why the text could not be read; `path` is where the reader was when it gave up.
struct JSONReadError: Error, Sendable {
    var code: AHAPDiagnostic.Code
    var message: String
    var offset: Int
    var path: [JSONPathComponent]
}

/// A JSON5 liberty the reader accepted, reported as a warning.
struct JSONLeniency: Sendable {
    var message: String
    var offset: Int
    var path: [JSONPathComponent]
}

struct JSONReader {
    private let bytes: UnsafeRawBufferPointer
    private let limits: AHAPLimits
    private var position = 0
    private var depth = 0
    private var valueCount = 0
    private var path: [JSONPathComponent] = []
    private(set) var leniencies: [JSONLeniency] = []
    /// Leniencies beyond `maximumDiagnostics`, counted but not kept (a file of a million comments stays cheap).
    private(set) var omittedLeniencies = 0

    /// Parses one JSON document from `bytes` (UTF-8, an optional byte order mark is skipped). Returns the value,
    /// the JSON5 liberties taken (at most `maximumDiagnostics`), and how many more were not kept.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, limits: AHAPLimits
    ) throws(JSONReadError) -> (value: JSONValue, leniencies: [JSONLeniency], omittedLeniencies: Int) {
        var reader = JSONReader(bytes: bytes, limits: limits)
        let value = try reader.readDocument()
        return (value, reader.leniencies, reader.omittedLeniencies)
    }

    private mutating func recordLeniency(_ message: String, at offset: Int) {
        guard leniencies.count < limits.maximumDiagnostics else {
            omittedLeniencies += 1
            return
        }
        leniencies.append(JSONLeniency(message: message, offset: offset, path: path))
    }

    private init(bytes: UnsafeRawBufferPointer, limits: AHAPLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    // MARK: Bytes

    private static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The byte at the cursor, or 0 at the end: NUL is invalid everywhere in JSON, so it doubles as a sentinel.
    private var current: UInt8 { position < bytes.count ? bytes[position] : 0 }
    private var atEnd: Bool { position >= bytes.count }

    private func failure(_ message: String, code: AHAPDiagnostic.Code = .notJSON) -> JSONReadError {
        JSONReadError(code: code, message: message, offset: position, path: path)
    }

    /// What the reader met that it did not expect, `context` saying where: the text's end, or the character.
    private func unexpected(where context: String) -> String {
        atEnd ? "the text ends \(context)" : "unexpected \(describeCurrent()) \(context)"
    }

    private func describeCurrent() -> String {
        if atEnd { return "the end of the text" }
        let byte = current
        if byte >= Self.firstPrintableByte && byte < Self.deleteByte { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte >= Self.firstNonASCIIByte, let length = multibyteLength(at: position),
            let scalar = String(
                decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<position + length]), as: UTF8.self
            )
            .unicodeScalars.first
        {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return scalar.isHidden ? code : "'\(scalar)' (\(code))"
        }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// The length of the well-formed UTF-8 character that starts at `offset` with a byte of 0x80 or more (no
    /// overlong form, no surrogate, nothing above U+10FFFF), or nil.
    private func multibyteLength(at offset: Int) -> Int? {
        let length: Int
        var second: ClosedRange<UInt8> = Self.continuationBytes
        switch bytes[offset] {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: return nil
        }
        guard offset + length <= bytes.count, second.contains(bytes[offset + 1]),
            (offset + 2..<offset + length).allSatisfy({ Self.continuationBytes.contains(bytes[$0]) })
        else { return nil }
        return length
    }

    /// Steps over the multi-byte character at the cursor, or refuses it when it is not UTF-8: JSON text is UTF-8,
    /// and a file that is not must not be read with its bytes silently replaced.
    private mutating func skipMultibyteCharacter() throws(JSONReadError) {
        guard let length = multibyteLength(at: position) else {
            throw failure(
                "byte 0x\(String(current, radix: 16, uppercase: true)) is not UTF-8 here; an AHAP file is UTF-8 text")
        }
        position += length
    }

    private static let continuationBytes: ClosedRange<UInt8> = 0x80...0xBF
    /// Bytes from this one up start or continue a multi-byte UTF-8 character.
    private static let firstNonASCIIByte: UInt8 = 0x80

    /// Bytes below this (U+0000 ... U+001F) are control characters: JSON requires them escaped inside strings.
    private static let firstPrintableByte: UInt8 = 0x20
    /// ASCII DEL, the first byte after the printable ASCII range (for quoting a byte in a message).
    private static let deleteByte: UInt8 = 0x7F

    // MARK: Document

    private mutating func readDocument() throws(JSONReadError) -> JSONValue {
        guard bytes.count <= limits.maximumDocumentBytes else {
            throw failure(
                "the document is \(bytes.count) bytes, more than the limit of \(limits.maximumDocumentBytes)",
                code: .limitExceeded)
        }
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        if bytes.count >= 2, (bytes[0], bytes[1]) == (0xFF, 0xFE) || (bytes[0], bytes[1]) == (0xFE, 0xFF) {
            throw failure("the text is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8")
        }
        try skipWhitespace()
        guard !atEnd else { throw failure("the document is empty") }
        let value = try readValue()
        try skipWhitespace()
        guard atEnd else { throw failure("unexpected \(describeCurrent()) after the end of the document") }
        return value
    }

    private mutating func skipWhitespace() throws(JSONReadError) {
        while true {
            switch current {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                position += 1
            case UInt8(ascii: "/") where !atEnd:
                try skipComment()
            default:
                return
            }
        }
    }

    private mutating func skipComment() throws(JSONReadError) {
        let start = position
        let next = position + 1 < bytes.count ? bytes[position + 1] : 0
        if next == UInt8(ascii: "/") {
            position += 2
            while !atEnd && current != UInt8(ascii: "\n") {
                if current >= Self.firstNonASCIIByte { try skipMultibyteCharacter() } else { position += 1 }
            }
        } else if next == UInt8(ascii: "*") {
            position += 2
            while true {
                guard !atEnd else {
                    position = start
                    throw failure("a /* comment is never closed")
                }
                if current == UInt8(ascii: "*"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "/") {
                    position += 2
                    break
                }
                if current >= Self.firstNonASCIIByte { try skipMultibyteCharacter() } else { position += 1 }
            }
        } else {
            throw failure("unexpected '/' (comments start with // or /*)")
        }
        recordLeniency("comment (JSON5, not JSON)", at: start)
    }

    // MARK: Values

    private mutating func countValue() throws(JSONReadError) {
        valueCount += 1
        guard valueCount <= limits.maximumJSONValues else {
            throw failure(
                "the document holds more than \(limits.maximumJSONValues) JSON values", code: .limitExceeded)
        }
    }

    private mutating func readValue() throws(JSONReadError) -> JSONValue {
        try countValue()
        switch current {
        case UInt8(ascii: "{"): return try readObject()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try readNumber())
        case UInt8(ascii: "t"): return try readLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try readLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try readLiteral("null", .null)
        case UInt8(ascii: "N"), UInt8(ascii: "I"), UInt8(ascii: "+"):
            if matchesNonFiniteLiteral() {
                throw failure("NaN and Infinity are not numbers AHAP can hold", code: .nonFiniteNumber)
            }
            throw failure(unexpected(where: "where a value should start"))
        case UInt8(ascii: "'"):
            throw failure("single-quoted strings are not supported; use double quotes")
        default:
            throw failure(unexpected(where: "where a value should start"))
        }
    }

    private func matches(_ word: StaticString, at offset: Int) -> Bool {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        let start = word.utf8Start
        for index in 0..<count where bytes[offset + index] != start[index] { return false }
        return true
    }

    private func matchesNonFiniteLiteral() -> Bool {
        var offset = position
        if current == UInt8(ascii: "-") || current == UInt8(ascii: "+") { offset += 1 }
        return matches("NaN", at: offset) || matches("Infinity", at: offset)
    }

    private mutating func readLiteral(_ word: StaticString, _ value: JSONValue) throws(JSONReadError) -> JSONValue {
        guard matches(word, at: position) else {
            throw failure(unexpected(where: "where a value should start"))
        }
        position += word.utf8CodeUnitCount
        return value
    }

    private mutating func enterContainer() throws(JSONReadError) {
        depth += 1
        guard depth <= limits.maximumDepth else {
            throw failure("nesting deeper than \(limits.maximumDepth) levels", code: .limitExceeded)
        }
    }

    private mutating func readObject() throws(JSONReadError) -> JSONValue {
        try enterContainer()
        position += 1
        var members: [JSONMember] = []
        try skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(members)
        }
        while true {
            guard current == UInt8(ascii: "\"") else {
                if current == UInt8(ascii: "'") { throw failure("single-quoted keys are not supported") }
                throw failure("expected a quoted key, found \(describeCurrent())")
            }
            let key = try readString()
            try skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw failure("expected ':' after the key \(key.quotedForMessage), found \(describeCurrent())")
            }
            position += 1
            try skipWhitespace()
            path.append(.key(key))
            let value = try readValue()
            path.removeLast()
            members.append(JSONMember(key: key, value: value))
            if try readSeparator(closing: UInt8(ascii: "}"), in: "an object") { break }
        }
        depth -= 1
        return .object(members)
    }

    private mutating func readArray() throws(JSONReadError) -> JSONValue {
        try enterContainer()
        position += 1
        var elements: [JSONValue] = []
        try skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            path.append(.index(elements.count))
            let value = try readValue()
            path.removeLast()
            elements.append(value)
            if try readSeparator(closing: UInt8(ascii: "]"), in: "an array") { break }
        }
        depth -= 1
        return .array(elements)
    }

    /// Reads what follows a member or an element: a comma (then `true` if a trailing comma closes the container,
    /// a JSON5 liberty that is recorded) or the closing bracket (`true`).
    private mutating func readSeparator(closing: UInt8, in container: String) throws(JSONReadError) -> Bool {
        let bracket = Character(Unicode.Scalar(closing))
        try skipWhitespace()
        if current == closing {
            position += 1
            return true
        }
        guard current == UInt8(ascii: ",") else {
            throw failure("expected ',' or '\(bracket)' in \(container), found \(describeCurrent())")
        }
        let comma = position
        position += 1
        try skipWhitespace()
        guard current == closing else { return false }
        recordLeniency("trailing comma before '\(bracket)' (JSON5, not JSON)", at: comma)
        position += 1
        return true
    }

    // MARK: Strings

    private mutating func readString() throws(JSONReadError) -> String {
        let opening = position
        position += 1
        let start = position
        // Fast path: no escapes, the common case in AHAP (keys, identifiers, paths).
        while true {
            let byte = current
            if byte == UInt8(ascii: "\"") {
                let length = position - start
                try checkStringLength(length, opening: opening)
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte >= Self.firstNonASCIIByte {
                try skipMultibyteCharacter()
                continue
            }
            if byte < Self.firstPrintableByte {
                if atEnd {
                    position = opening
                    throw failure("a string is never closed")
                }
                throw failure("a control character (byte 0x\(String(byte, radix: 16))) inside a string must be escaped")
            }
            position += 1
        }
        var utf8: [UInt8] = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while true {
            let byte = current
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: utf8, as: UTF8.self)
            }
            if byte < Self.firstPrintableByte {
                if atEnd {
                    position = opening
                    throw failure("a string is never closed")
                }
                throw failure("a control character (byte 0x\(String(byte, radix: 16))) inside a string must be escaped")
            }
            if byte == UInt8(ascii: "\\") {
                position += 1
                try readEscape(into: &utf8)
            } else if byte >= Self.firstNonASCIIByte {
                let start = position
                try skipMultibyteCharacter()
                utf8.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
            } else {
                utf8.append(byte)
                position += 1
            }
            try checkStringLength(utf8.count, opening: opening)
        }
    }

    private func checkStringLength(_ length: Int, opening: Int) throws(JSONReadError) {
        guard length <= limits.maximumStringBytes else {
            throw JSONReadError(
                code: .limitExceeded,
                message: "a string longer than \(limits.maximumStringBytes) bytes", offset: opening, path: path)
        }
    }

    private mutating func readEscape(into utf8: inout [UInt8]) throws(JSONReadError) {
        let byte = current
        position += 1
        switch byte {
        case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHexQuad()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate; together they make one scalar.
                guard matches("\\u", at: position) else {
                    throw failure("a \\u escape holds a lone surrogate")
                }
                position += 2
                let low = try readHexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a \\u escape holds a lone surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw failure("a \\u escape holds a lone surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw failure("a \\u escape is not a Unicode scalar") }
            utf8.append(contentsOf: String(unicode).utf8)
        default:
            position -= 1
            throw failure("unknown escape '\\\(describeCurrent())' in a string")
        }
    }

    private mutating func readHexQuad() throws(JSONReadError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = current
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("a \\u escape needs four hexadecimal digits")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    // MARK: Numbers

    /// Powers of ten that a `Double` holds exactly (10^0 ... 10^22): a decimal whose digits form an integer of at
    /// most 2^53 and with such an exponent converts with one correctly rounded multiplication or division
    /// (Clinger's fast path); anything else goes to the standard library's correctly rounded conversion.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]
    /// Mantissas up to 2^53 are exact in a `Double`, the condition of the fast path.
    private static let exactMantissaLimit: UInt64 = 1 << 53
    /// Digits a `UInt64` mantissa accumulates without overflow (10^19 < 2^64).
    private static let mantissaDigitLimit = 19
    /// Exponent digits beyond this many are not accumulated: such a number goes to the standard library's
    /// conversion, which reads the whole exponent.
    private static let exponentDigitLimit = 6

    /// A number literal's digits as they are read: up to 19 significant digits in an integer mantissa, and the
    /// power of ten that scales it.
    private struct DecimalDigits {
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var decimalExponent = 0
        /// Whether the exponent had more digits than were accumulated: `decimalExponent` is then not the
        /// number's. (A long fraction can bring such an exponent back into range: "0.000...0001e1000001".)
        var exponentIsTruncated = false

        /// A digit before the decimal point: beyond the mantissa's capacity it only scales the number up.
        mutating func appendInteger(_ digit: UInt8) {
            if significantDigits < JSONReader.mantissaDigitLimit {
                mantissa = mantissa * 10 + UInt64(digit)
            } else {
                decimalExponent += 1
            }
            significantDigits += 1
        }

        /// A digit after the decimal point: beyond the mantissa's capacity it is dropped (the conversion of
        /// such a long literal goes through the standard library anyway).
        mutating func appendFraction(_ digit: UInt8) {
            guard significantDigits < JSONReader.mantissaDigitLimit else {
                significantDigits += 1
                return
            }
            if mantissa != 0 || digit != 0 { significantDigits += 1 }
            mantissa = mantissa * 10 + UInt64(digit)
            decimalExponent -= 1
        }

        /// The value by Clinger's fast path, when the mantissa and the power of ten are both exact.
        var exactValue: Double? {
            guard !exponentIsTruncated, significantDigits <= JSONReader.mantissaDigitLimit,
                mantissa <= JSONReader.exactMantissaLimit, abs(decimalExponent) < JSONReader.exactPowersOfTen.count
            else { return nil }
            let magnitude = Double(mantissa)
            return decimalExponent >= 0
                ? magnitude * JSONReader.exactPowersOfTen[decimalExponent]
                : magnitude / JSONReader.exactPowersOfTen[-decimalExponent]
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private var currentDigit: UInt8? { Self.isDigit(current) ? current - UInt8(ascii: "0") : nil }

    private mutating func readNumber() throws(JSONReadError) -> Double {
        let start = position
        let negative = try readSign()
        var digits = DecimalDigits()
        try readIntegerPart(into: &digits)
        try readFraction(into: &digits)
        try readExponent(into: &digits)
        guard position - start <= limits.maximumNumberBytes else {
            position = start
            throw failure("a number literal longer than \(limits.maximumNumberBytes) bytes", code: .limitExceeded)
        }
        let value: Double
        if let exact = digits.exactValue {
            value = negative ? -exact : exact
        } else {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            guard let parsed = Double(text) else { throw failure("\(text) is not a number") }
            value = parsed
        }
        guard value.isFinite else {
            position = start
            throw failure("a number too large for a Double", code: .nonFiniteNumber)
        }
        return value
    }

    /// A leading minus; `-Infinity` and `-NaN` (JSON5 has both) get their own message and code.
    private mutating func readSign() throws(JSONReadError) -> Bool {
        guard current == UInt8(ascii: "-") else { return false }
        position += 1
        if matches("Infinity", at: position) || matches("NaN", at: position) {
            throw failure("NaN and Infinity are not numbers AHAP can hold", code: .nonFiniteNumber)
        }
        return true
    }

    private mutating func readIntegerPart(into digits: inout DecimalDigits) throws(JSONReadError) {
        if current == UInt8(ascii: "0") {
            position += 1
            if currentDigit != nil { throw failure("numbers may not have leading zeros") }
            return
        }
        guard currentDigit != nil else {
            throw failure("a number needs a digit after '-', found \(describeCurrent())")
        }
        while let digit = currentDigit {
            digits.appendInteger(digit)
            position += 1
        }
    }

    private mutating func readFraction(into digits: inout DecimalDigits) throws(JSONReadError) {
        guard current == UInt8(ascii: ".") else { return }
        position += 1
        guard currentDigit != nil else { throw failure("a number needs digits after its decimal point") }
        while let digit = currentDigit {
            digits.appendFraction(digit)
            position += 1
        }
    }

    /// Adds the exponent (if any) to `digits`; its digits beyond `exponentDigitLimit` are read but not
    /// accumulated, and mark the exponent truncated.
    private mutating func readExponent(into digits: inout DecimalDigits) throws(JSONReadError) {
        guard current == UInt8(ascii: "e") || current == UInt8(ascii: "E") else { return }
        position += 1
        var negative = false
        if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
            negative = current == UInt8(ascii: "-")
            position += 1
        }
        guard currentDigit != nil else { throw failure("a number needs digits in its exponent") }
        var exponent = 0
        var exponentDigits = 0
        while let digit = currentDigit {
            if exponentDigits < Self.exponentDigitLimit {
                exponent = exponent * 10 + Int(digit)
                if exponent != 0 { exponentDigits += 1 }
            } else {
                digits.exponentIsTruncated = true
            }
            position += 1
        }
        digits.decimalExponent += negative ? -exponent : exponent
    }
}
