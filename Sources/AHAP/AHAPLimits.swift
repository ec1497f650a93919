/// Bounds on what the reader accepts, so that hostile input costs bounded time and memory. Every limit is far
/// above what real AHAP files need (the largest file in the corpus is 160 KB, nests 6 levels, and has about
/// 100 pattern entries); exceeding one is an error (`limit-exceeded`), never a crash.
public struct AHAPLimits: Sendable, Hashable {
    /// Largest document accepted, in bytes (16 MiB: 100 times the largest real file we know).
    public var maximumDocumentBytes: Int
    /// Deepest nesting of objects and arrays; AHAP needs 6, and a recursive reader must not exhaust its stack.
    public var maximumDepth: Int
    /// Most JSON values (of any kind) in one document; bounds the memory of the parsed tree.
    public var maximumJSONValues: Int
    /// Longest string, in UTF-8 bytes (waveform paths and metadata are short).
    public var maximumStringBytes: Int
    /// Longest number literal, in bytes: no AHAP value needs more than 17 significant digits, and converting a
    /// megabyte of digits would cost far more than the rest of the document.
    public var maximumNumberBytes: Int
    /// Most entries in `Pattern` (events, parameters and curves together).
    public var maximumPatternEntries: Int
    /// Most parameters in one event's `EventParameters`.
    public var maximumEventParameters: Int
    /// Most control points in one curve (the validator warns above 16; this is the hard bound).
    public var maximumControlPoints: Int
    /// Most diagnostics kept per document; beyond it the first error is still kept (a document that does not
    /// load always names an error), and the rest are summarised by one `diagnostics-truncated` warning.
    public var maximumDiagnostics: Int

    public init(
        maximumDocumentBytes: Int = 16 * 1024 * 1024,
        maximumDepth: Int = 32,
        maximumJSONValues: Int = 1_000_000,
        maximumStringBytes: Int = 64 * 1024,
        maximumNumberBytes: Int = 1_024,
        maximumPatternEntries: Int = 100_000,
        maximumEventParameters: Int = 64,
        maximumControlPoints: Int = 10_000,
        maximumDiagnostics: Int = 1_000
    ) {
        self.maximumDocumentBytes = maximumDocumentBytes
        self.maximumDepth = maximumDepth
        self.maximumJSONValues = maximumJSONValues
        self.maximumStringBytes = maximumStringBytes
        self.maximumNumberBytes = maximumNumberBytes
        self.maximumPatternEntries = maximumPatternEntries
        self.maximumEventParameters = maximumEventParameters
        self.maximumControlPoints = maximumControlPoints
        self.maximumDiagnostics = maximumDiagnostics
    }

    /// The limits used when none are given.
    public static let `default` = AHAPLimits()
}
