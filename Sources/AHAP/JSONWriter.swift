// Writes a JSON tree as text: the AHAP encoder's back end, and the CLI's (its JSON lines, `haptics render --format
// json`). Numbers use Swift's shortest round-tripping form, so parse -> encode -> parse reproduces every `Double`
// exactly.

/// A value JSON cannot hold (NaN or an infinity), with where it was.
package struct JSONWriteError: Error, Sendable {
    package var path: [JSONPathComponent]
}

package struct JSONWriter {
    private var output: [UInt8] = []
    private var path: [JSONPathComponent] = []
    private let prettyPrinted: Bool
    private static let indentWidth = 2
    /// Integral values below 2^53 are written without a fraction ("2", not "2.0"): exact, and what people write.
    private static let exactIntegerLimit: Double = 9_007_199_254_740_992

    private init(prettyPrinted: Bool) {
        self.prettyPrinted = prettyPrinted
    }

    /// UTF-8 text of `value`; pretty-printed with two-space indentation and a final newline, or compact.
    package static func encode(_ value: JSONValue, prettyPrinted: Bool) throws(JSONWriteError) -> [UInt8] {
        var writer = JSONWriter(prettyPrinted: prettyPrinted)
        try writer.write(value, indent: 0)
        if prettyPrinted { writer.output.append(UInt8(ascii: "\n")) }
        return writer.output
    }

    /// Compact text of a value, for messages and for metadata values that are not strings. Non-finite numbers
    /// (impossible in a parsed tree) are written as `null`.
    package static func compactText(of value: JSONValue) -> String {
        let bytes = (try? encode(value, prettyPrinted: false)) ?? Array("null".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func newline(indent: Int) {
        guard prettyPrinted else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * Self.indentWidth))
    }

    private mutating func write(_ value: JSONValue, indent: Int) throws(JSONWriteError) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let flag):
            output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            guard number.isFinite else { throw JSONWriteError(path: path) }
            if number == number.rounded(), abs(number) < Self.exactIntegerLimit, number != 0 || number.sign == .plus {
                output.append(contentsOf: String(Int64(number)).utf8)
            } else {
                output.append(contentsOf: number.description.utf8)
            }
        case .string(let text):
            writeString(text)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1)
                path.append(.index(index))
                try write(element, indent: indent + 1)
                path.removeLast()
            }
            if !elements.isEmpty { newline(indent: indent) }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1)
                writeString(member.key)
                output.append(contentsOf: (prettyPrinted ? ": " : ":").utf8)
                path.append(.key(member.key))
                try write(member.value, indent: indent + 1)
                path.removeLast()
            }
            if !members.isEmpty { newline(indent: indent) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private mutating func writeString(_ text: String) {
        Self.appendString(text, to: &output, escapingHidden: false)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    /// Scalars below this are control characters, which JSON strings must escape (`\u00XX`).
    private static let firstPrintableScalar: UInt32 = 0x20
    /// The first scalar after ASCII.
    private static let firstNonASCIIScalar: UInt32 = 0x80
    /// ASCII DEL, a control character JSON lets through.
    private static let deleteScalar: UInt32 = 0x7F

    /// Appends `text` as a JSON string. With `escapingHidden`, every scalar that `isHidden` also becomes a `\uXXXX`
    /// escape (a surrogate pair above U+FFFF): the text stays valid JSON, and no character of it can end a line,
    /// move the cursor, reorder what follows or hide itself.
    fileprivate static func appendString(_ text: String, to output: inout [UInt8], escapingHidden: Bool) {
        output.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: output.append(contentsOf: "\\\"".utf8)
            case 0x5C: output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0..<firstPrintableScalar: appendEscape(UInt16(scalar.value), to: &output)
            case deleteScalar where escapingHidden: appendEscape(UInt16(scalar.value), to: &output)
            case firstPrintableScalar..<firstNonASCIIScalar: output.append(UInt8(scalar.value))
            default:
                if escapingHidden && scalar.isHidden {
                    appendEscapes(of: scalar, to: &output)
                } else {
                    UTF8.encode(scalar) { output.append($0) }
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// `scalar` as `\uXXXX` escapes: one, or a surrogate pair above U+FFFF.
    fileprivate static func appendEscapes(of scalar: Unicode.Scalar, to output: inout [UInt8]) {
        for unit in UTF16.encode(scalar) ?? UTF16.EncodedScalar() { appendEscape(unit, to: &output) }
    }

    private static func appendEscape(_ unit: UInt16, to output: inout [UInt8]) {
        output.append(contentsOf: "\\u".utf8)
        for shift: UInt16 in [12, 8, 4, 0] {
            output.append(hexDigits[Int((unit >> shift) & 0x0F)])
        }
    }
}

extension Unicode.Scalar {
    /// Whether the scalar shows nothing of itself where it stands, or acts on the text around it: control
    /// characters (a newline, an escape sequence's ESC), format characters (bidirectional overrides, zero-width
    /// joiners), line and paragraph separators, spaces other than U+0020, private-use and unassigned code points.
    /// Text read from a file is written in messages with these escaped, so it cannot forge or hide a line.
    package var isHidden: Bool {
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: true
        case .spaceSeparator: value != 0x20
        default: false
        }
    }
}

extension String {
    /// The text as a quoted JSON string with every hidden character escaped (`Unicode.Scalar.isHidden`), for a
    /// key or value read from a file and named in a message: `"Intensity\u001b[2K"`.
    package var quotedForMessage: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 2)
        JSONWriter.appendString(self, to: &bytes, escapingHidden: true)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text with every hidden character but a line break escaped as `quotedForMessage` escapes it (`\u001b`),
    /// unquoted: for a message of several lines that holds names from anywhere.
    package var escapingHiddenButLineBreaks: String {
        guard unicodeScalars.contains(where: { $0.isHidden && $0 != "\n" }) else { return self }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            if scalar.isHidden && scalar != "\n" {
                JSONWriter.appendEscapes(of: scalar, to: &bytes)
            } else {
                UTF8.encode(scalar) { bytes.append($0) }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Bytes meant as UTF-8 text that are not all UTF-8 (a command-line argument: a file's name in Latin-1), quoted
    /// for a message: each byte that is no part of a UTF-8 character as `\xE9`, the text between as
    /// `quotedForMessage` writes it (`"caf\xE9.ahap"`). A backslash of the text itself is written `\\`, so that
    /// `\xE9` can only be a byte.
    package static func quotedForMessage(bytes: [UInt8]) -> String {
        var output: [UInt8] = [UInt8(ascii: "\"")]
        var text = ""
        func appendText() {
            var quoted: [UInt8] = []
            JSONWriter.appendString(text, to: &quoted, escapingHidden: true)
            output.append(contentsOf: quoted.dropFirst().dropLast())
            text = ""
        }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var position = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                text.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                position += encoded.count
            case .error(let length):
                appendText()
                for byte in bytes[position..<position + length] {
                    output.append(contentsOf: "\\x".utf8)
                    output.append(contentsOf: String(byte, radix: 16, uppercase: true).utf8)
                }
                position += length
            case .emptyInput:
                appendText()
                output.append(UInt8(ascii: "\""))
                return String(decoding: output, as: UTF8.self)
            }
        }
    }

    /// The text as it is when nothing in it is hidden, and `quotedForMessage` otherwise: for a file name or key
    /// that reads best bare but may come from anywhere.
    package var shownInMessage: String {
        unicodeScalars.contains(where: \.isHidden) ? quotedForMessage : self
    }
}
