// lh_pattern_load_data and lh_pattern_load_file report what `haptics validate` reports, with the JSON path.
import AHAPFiles
import CLinuxHaptics
import Foundation
import Testing

@Suite struct PatternLoadingTests {
    static let transient = #"{"Time": 0.1, "EventType": "HapticTransient", "EventParameters": []}"#
    static let wrongType =
        #"{"Time": 0, "EventType": "HapticTransient", "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": "loud"}]}"#

    @Test func aValidDocumentLoadsWithItsDuration() throws {
        let (pattern, error) = loadData(document(Self.transient))
        defer { lh_pattern_free(pattern) }
        #expect(error == nil)
        let expected = try HapticPattern(data: Data(document(Self.transient).utf8)).duration
        #expect(lh_pattern_duration(pattern) == expected)
    }

    @Test func anInvalidDocumentGivesTheValidatorsLinesAndTheFirstJSONPath() {
        let text = document(Self.wrongType)
        let (pattern, error) = loadData(text)
        let report = AHAPValidator.validate(data: Data(text.utf8))
        #expect(pattern == nil)
        #expect(
            error
                == ReportedError(
                    status: LH_ERROR_INVALID_PATTERN, message: report.errors.map { "\($0)" }.joined(separator: "\n"),
                    jsonPath: "Pattern[0].Event.EventParameters[0].ParameterValue"))
    }

    @Test func aSyntaxErrorNamesItsLineAndColumn() {
        let (pattern, error) = loadData("{\"Pattern\": [}")
        #expect(pattern == nil)
        #expect(error?.status == LH_ERROR_INVALID_PATTERN)
        #expect(error?.message.contains("line 1, column") == true, "\(error?.message ?? "")")
    }

    @Test func aFileIsReportedWithTheLinesOfHapticsValidate() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("capi-\(UUID().uuidString).ahap")
        try Data(document(Self.wrongType).utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var pattern: OpaquePointer?
        let (status, error) = calling { error in lh_pattern_load_file(url.path, &pattern, error) }
        let validate = AHAPValidationRun(paths: [url.path], strict: false)
        #expect(status == LH_ERROR_INVALID_PATTERN)
        #expect(pattern == nil)
        #expect(error?.message == validate.textLines.filter { $0.contains(": error: ") }.joined(separator: "\n"))
        #expect(error?.message.hasPrefix("\(url.path): Pattern[0].Event.EventParameters[0].ParameterValue: ") == true)
    }

    @Test func aMissingFileIsAFileError() {
        var pattern: OpaquePointer?
        let (status, error) = calling { error in lh_pattern_load_file("/nonexistent/x.ahap", &pattern, error) }
        #expect(status == LH_ERROR_FILE)
        #expect(error?.message == "/nonexistent/x.ahap: error: cannot read the file: no such file [unreadable-file]")
        #expect(error?.jsonPath == "")
    }

    @Test func missingPointersAreInvalidArgumentsNamedInTheMessage() {
        var pattern: OpaquePointer?
        let (noPath, pathError) = calling { error in lh_pattern_load_file(nil, &pattern, error) }
        #expect(noPath == LH_ERROR_INVALID_ARGUMENT && pathError?.message == "path is NULL")
        let (noOut, outError) = calling { error in lh_pattern_load_data("{}", 2, nil, error) }
        #expect(noOut == LH_ERROR_INVALID_ARGUMENT && outError?.message == "pattern is NULL")
        let (noBytes, bytesError) = calling { error in lh_pattern_load_data(nil, 2, &pattern, error) }
        #expect(noBytes == LH_ERROR_INVALID_ARGUMENT && bytesError?.message == "bytes is NULL")
        #expect(pattern == nil, "a failed call writes no pattern")
    }

    @Test func aLengthOverTheDocumentLimitIsRefusedBeforeAByteIsRead() {
        let limit = AHAPLimits.default.maximumDocumentBytes
        // Two bytes of buffer: a call that read `length` bytes would read far past them.
        let bytes: [UInt8] = Array("{}".utf8)
        for length in [limit + 1, Int(bitPattern: UInt.max)] {
            var pattern: OpaquePointer?
            let (status, error) = calling { error in lh_pattern_load_data(bytes, length, &pattern, error) }
            let asSizeT = UInt(bitPattern: length)
            #expect(status == LH_ERROR_INVALID_PATTERN && pattern == nil)
            #expect(
                error?.message
                    == "error: the document is \(asSizeT) bytes, more than the limit of \(limit) [limit-exceeded]")
            #expect(error?.jsonPath == "")
        }
    }

    @Test func aDocumentOfExactlyTheLimitIsRead() {
        let limit = AHAPLimits.default.maximumDocumentBytes
        let text = document(Self.transient)
        let padded = Array(text.utf8) + Array(repeating: UInt8(ascii: " "), count: limit - text.utf8.count)
        var pattern: OpaquePointer?
        let (status, error) = calling { error in lh_pattern_load_data(padded, padded.count, &pattern, error) }
        defer { lh_pattern_free(pattern) }
        #expect(status == LH_OK && error == nil)
    }

    @Test func anEmptyPathIsAFileErrorSayingSoNotADirectory() {
        var pattern: OpaquePointer?
        let (status, error) = calling { error in lh_pattern_load_file("", &pattern, error) }
        #expect(status == LH_ERROR_FILE && pattern == nil)
        #expect(error?.message == ": error: cannot read the file: the path is empty [unreadable-file]")
    }

    @Test func aPathThatIsNotUTF8IsAnInvalidArgumentNotAnotherFilesError() throws {
        // A file whose name has a Latin-1 byte (0xE9): read with that byte replaced, it would be "no such file".
        let folder = FileManager.default.temporaryDirectory.path
        let name: [CChar] = Array("\(folder)/capi-".utf8CString.dropLast()) + [CChar(bitPattern: 0xE9), 0]
        var pattern: OpaquePointer?
        let (status, error) = calling { error in lh_pattern_load_file(name, &pattern, error) }
        #expect(status == LH_ERROR_INVALID_ARGUMENT && pattern == nil)
        #expect(error?.message.hasPrefix("path is not UTF-8 text") == true, "\(error?.message ?? "")")
    }

    @Test func aFailureWithoutAPlaceForTheErrorStillReturnsItsStatus() {
        var pattern: OpaquePointer?
        #expect(lh_pattern_load_data("[", 1, &pattern, nil) == LH_ERROR_INVALID_PATTERN)
        #expect(pattern == nil)
    }
}
