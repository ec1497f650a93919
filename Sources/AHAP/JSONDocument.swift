// Reading the package's own JSON files (the cue sheet) with the AHAP reader, so that their errors say where:
// the JSON path, the line and the column, which Foundation's decoder does not give.
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Why a JSON document of the package's own formats (the cue sheet) could not be read: where, and why.
package struct JSONDocumentError: Error, Sendable, Equatable {
    /// The JSON path where the reader gave up (`chapters[2].cues`), empty at the top.
    package var path: String
    /// 1-based position in the text.
    package var line: Int
    package var column: Int
    package var message: String
}

extension JSONValue {
    /// Reads one JSON document, as the AHAP reader does (UTF-8, within `limits`; a trailing comma or a comment
    /// is tolerated): the value, or where and why it is not JSON.
    package static func read(_ data: Data, limits: AHAPLimits = .default) throws(JSONDocumentError) -> JSONValue {
        let result = data.withUnsafeBytes { bytes -> Result<JSONValue, JSONDocumentError> in
            do throws(JSONReadError) {
                return .success(try JSONReader.parse(bytes, limits: limits).value)
            } catch {
                let position = TextPosition.locate([error.offset], in: bytes)[0]
                return .failure(
                    JSONDocumentError(
                        path: error.path.formatted, line: position.line, column: position.column,
                        message: error.message))
            }
        }
        return try result.get()
    }

    /// The value of `key` in an object (the last, when the key appears twice); nil when absent or not an object.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }
}
