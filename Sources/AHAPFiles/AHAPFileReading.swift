// Reading and validating AHAP files: the bytes of a file through `DocumentFile`, handed to the validator.
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
internal import LinuxSystem

extension AHAPValidator {
    /// Reads and validates the file at `url`. A file that cannot be read, or is not a regular file (a
    /// directory, a device, a pipe), is one `unreadable-file` error saying what it is; a file larger than
    /// `limits.maximumDocumentBytes` is one `limit-exceeded` error, found before anything is read. An
    /// `AudioCustom` event whose sound file is not beside the document (a relative path) or not there (an
    /// absolute one) is a `sound-file-not-found` warning, and so is one `soundCheck` finds a problem with (given
    /// the path of a regular file there, it says what is wrong with it as a sound, or nil: this module reads no
    /// sound, `haptics validate` passes libsndfile's open).
    public static func validate(
        contentsOf url: URL, limits: AHAPLimits = .default, soundCheck: ((String) -> String?)? = nil
    ) -> AHAPReport {
        switch DocumentFile.read(url, maximumBytes: limits.maximumDocumentBytes) {
        case .success(let bytes):
            let folder = url.deletingLastPathComponent().path
            return bytes.withUnsafeBytes { bytes in
                validate(bytes: bytes, limits: limits) {
                    soundFileProblem($0, besideFilesIn: folder, soundCheck: soundCheck)
                }
            }
        case .failure(.unreadable(let reason)):
            return unreadable(reason)
        case .failure(.directory):
            return unreadable("it is a directory, not a file (name the .ahap files in it, e.g. DIR/*.ahap)")
        case .failure(.tooLarge(let size, let limit)):
            return AHAPReport(
                pattern: nil,
                diagnostics: [
                    AHAPDiagnostic(
                        severity: .error, code: .limitExceeded, path: "",
                        message: "the file is \(size) bytes, more than the limit of \(limit)")
                ])
        }
    }

    /// What is wrong with the sound file an `AudioCustom` event names, for a document in `folder`, by the rules
    /// the engine looks for it with (`AudioResourcePath`): an absolute path as it is, a relative one beside the
    /// document first (then in the engine's resource folder, which a document alone does not know), no `..`
    /// component.
    private static func soundFileProblem(
        _ path: String, besideFilesIn folder: String, soundCheck: ((String) -> String?)?
    ) -> String? {
        if let refusal = AudioResourcePath.refusal(of: path) { return "names no file: its path \(refusal)" }
        let file = AudioResourcePath.candidates(for: path, in: [folder])[0]
        if Sys.exists(file) {
            // A FIFO or a device is no sound: the engine refuses it (an open of a FIFO would wait for a writer).
            if let notRegular = DocumentFile.notRegular(file) { return "cannot be read: \(notRegular)" }
            return soundCheck?(file)
        }
        return path.hasPrefix("/")
            ? "is not there"
            : "is not beside the pattern (at \(file.shownInMessage)), where the engine looks first, then in its resource folder"
    }
}

extension HapticPattern {
    /// Reads a pattern from an AHAP file, like `CHHapticPattern(contentsOf:)`. Warnings are dropped; use
    /// `AHAPValidator.validate(contentsOf:)` to see them.
    public init(contentsOf url: URL, limits: AHAPLimits = .default) throws(AHAPError) {
        self = try Self.loaded(from: AHAPValidator.validate(contentsOf: url, limits: limits))
    }
}

extension AHAPValidationRun {
    /// Validates each path (relative paths resolve against the current directory, as the system resolves them),
    /// each sound file an event names checked by `soundCheck` too
    /// (`AHAPValidator.validate(contentsOf:limits:soundCheck:)`).
    public init(
        paths: [String], strict: Bool, limits: AHAPLimits = .default, soundCheck: ((String) -> String?)? = nil
    ) {
        let results = paths.map { path in
            // An empty path would name the current directory.
            FileResult(
                file: path,
                report: path.isEmpty
                    ? AHAPValidator.unreadable("the path is empty")
                    : AHAPValidator.validate(
                        contentsOf: DocumentFile.url(ofPath: path), limits: limits, soundCheck: soundCheck))
        }
        self.init(results: results, strict: strict)
    }
}
