// The cue sheet of an app: which pattern plays at which moment of which chapter. `haptics replay` reads it
// (Haptics/cues.json); the format is documented in docs/app-haptics.md.
import AHAP
import AHAPFiles

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LinuxSystem

/// An app's haptic cues, chapter by chapter, as `Haptics/cues.json` lists them.
public struct CueSheet: Sendable, Hashable {
    /// One chapter: its number, a title, and its cues in time order.
    public struct Chapter: Sendable, Hashable {
        public var number: Int
        public var title: String
        public var cues: [Cue]

        public init(number: Int, title: String, cues: [Cue]) {
            self.number = number
            self.title = title
            self.cues = cues
        }

        /// Every play of the chapter with `count` expanded, sorted by time (ties keep sheet order). A chapter made
        /// in code is held to the rules a sheet is read by: a cue plays at least once, the chapter at most
        /// `maximumPlays` times, and every play within 0 ... `latestTime` seconds, a time or interval that is not a
        /// number counting as 0 (a count below 1 trapped, `Int.max` tried to allocate it all, and a time that was
        /// not a number left the timeline unsorted, until 6 December).
        public var timeline: [TimedCue] {
            var left = CueSheet.maximumPlays
            let plays = cues.enumerated().flatMap { index, cue in
                let count = Swift.min(Swift.max(cue.count, 1), left)
                left -= count
                let start = CueSheet.heldTime(cue.time), interval = CueSheet.heldTime(cue.interval)
                return (0..<count).map { repetition in
                    TimedCue(
                        chapter: number, time: CueSheet.heldTime(start + Double(repetition) * interval),
                        pattern: cue.pattern, moment: cue.moment, sheetIndex: index, repetition: repetition)
                }
            }
            return plays.enumerated().sorted { lhs, rhs in
                lhs.element.time != rhs.element.time ? lhs.element.time < rhs.element.time : lhs.offset < rhs.offset
            }.map(\.element)
        }

        /// When the chapter's last cue starts, in seconds from the chapter's start (0 without cues).
        public var lastCueTime: Double { timeline.last?.time ?? 0 }
    }

    /// One line of the sheet: a pattern played at `time`, optionally `count` times `interval` apart.
    public struct Cue: Sendable, Hashable {
        /// Seconds from the start of the chapter.
        public var time: Double
        /// The pattern's name: `Haptics/<pattern>.ahap`.
        public var pattern: String
        /// What happens in the app at that moment (free text, shown by `haptics replay`).
        public var moment: String
        /// How many times the pattern plays (1 when the sheet does not say).
        public var count: Int
        /// Seconds between two plays when `count` > 1.
        public var interval: Double

        public init(time: Double, pattern: String, moment: String, count: Int = 1, interval: Double = 0) {
            self.time = time
            self.pattern = pattern
            self.moment = moment
            self.count = count
            self.interval = interval
        }
    }

    /// The format version this type reads.
    public static let currentVersion = 1

    /// The most plays a sheet may hold, every cue's `count` summed: far above what an app's chapters need (a
    /// heartbeat at 120 bpm for ten minutes is 1,200 plays), low enough that a hostile sheet cannot make a
    /// chapter's timeline exhaust memory.
    public static let maximumPlays = 100_000

    /// The latest a cue may play in its chapter, in seconds: a day, far beyond any app's chapter, and small
    /// enough that every chapter's time summed over a replay stays a time a wait can be made for (a cue at
    /// 2e20 s, or two chapters of 1e308 s each, trapped the replay).
    public static let latestTime: Double = 86_400

    /// `seconds` within 0 ... `latestTime`; one that is not a number is 0.
    static func heldTime(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : Swift.min(Swift.max(seconds, 0), latestTime)
    }

    public var app: String
    /// The chapters in sheet order.
    public var chapters: [Chapter]

    public init(app: String, chapters: [Chapter]) {
        self.app = app
        self.chapters = chapters
    }

    public func chapter(_ number: Int) -> Chapter? { chapters.first { $0.number == number } }

    /// Where in the document the first cue naming `pattern` names it (`chapters[1].cues[0].pattern`, the paths of
    /// `CueSheetError`); nil when no cue does.
    public func location(ofFirstCueNaming pattern: String) -> String? {
        for (chapterIndex, chapter) in chapters.enumerated() {
            if let cueIndex = chapter.cues.firstIndex(where: { $0.pattern == pattern }) {
                return "chapters[\(chapterIndex)].cues[\(cueIndex)].pattern"
            }
        }
        return nil
    }

    /// Every pattern name the sheet mentions, sorted, without duplicates.
    public var patternNames: [String] { Set(chapters.flatMap { $0.cues.map(\.pattern) }).sorted() }
}

/// One play of a pattern in a chapter's timeline.
public struct TimedCue: Sendable, Hashable {
    public var chapter: Int
    /// Seconds from the start of the chapter.
    public var time: Double
    public var pattern: String
    public var moment: String
    /// Which line of the chapter's `cues` this play comes from (0-based).
    public var sheetIndex: Int
    /// Which repetition of that line (0-based).
    public var repetition: Int
}

/// Why a cue sheet could not be read; `description` names the file and the JSON path of the problem.
public struct CueSheetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as it was given, or `<data>` for in-memory text.
    public var file: String
    /// Where in the document: `chapters[2].cues[0].time`, or empty for the whole document.
    public var path: String
    public var reason: String

    public init(file: String, path: String, reason: String) {
        self.file = file
        self.path = path
        self.reason = reason
    }

    public var description: String {
        path.isEmpty ? "\(file): \(reason)" : "\(file): \(path): \(reason)"
    }
}

extension CueSheet {
    /// Reads and checks the cue sheet at `url`.
    public init(contentsOf url: URL) throws(CueSheetError) {
        switch DocumentFile.read(url, maximumBytes: AHAPLimits.default.maximumDocumentBytes) {
        case .success(let bytes):
            try self.init(data: Data(bytes), file: url.path)
        case .failure(.unreadable(let reason)):
            throw CueSheetError(file: url.path, path: "", reason: "cannot read the file (\(reason))")
        case .failure(.directory):
            throw CueSheetError(
                file: url.path, path: "", reason: "cannot read the file (it is a directory, not a file)")
        case .failure(.tooLarge(let size, let limit)):
            throw CueSheetError(
                file: url.path, path: "", reason: "the file is \(size) bytes, more than the limit of \(limit)")
        }
    }

    /// Reads and checks cue sheet text; `file` names it in errors. Text that is not JSON is reported with its
    /// line and column; a value of the wrong kind with its JSON path (`chapters[0].cues[1].count: expected a
    /// whole number, found 1.5`).
    public init(data: Data, file: String = "<data>") throws(CueSheetError) {
        let value: JSONValue
        do throws(JSONDocumentError) {
            value = try JSONValue.read(data)
        } catch {
            throw CueSheetError(
                file: file, path: error.path,
                reason: "line \(error.line), column \(error.column): not valid JSON: \(error.message)")
        }
        let document: SheetDocument
        do throws(SheetDocument.Mismatch) {
            document = try SheetDocument(value)
        } catch {
            throw CueSheetError(file: file, path: error.path, reason: error.reason)
        }
        try self.init(checking: document, file: file)
    }

    private init(checking document: SheetDocument, file: String) throws(CueSheetError) {
        func fail(_ path: String, _ reason: String) -> CueSheetError {
            CueSheetError(file: file, path: path, reason: reason)
        }
        guard document.version == Self.currentVersion else {
            throw fail("version", "unsupported version \(document.version) (this reader knows \(Self.currentVersion))")
        }
        var seen: Set<Int> = []
        var chapters: [Chapter] = []
        var plays = 0
        for (chapterIndex, chapter) in document.chapters.enumerated() {
            let chapterPath = "chapters[\(chapterIndex)]"
            guard chapter.chapter >= 1 else {
                throw fail("\(chapterPath).chapter", "chapter numbers start at 1, found \(chapter.chapter)")
            }
            guard seen.insert(chapter.chapter).inserted else {
                throw fail("\(chapterPath).chapter", "chapter \(chapter.chapter) appears twice")
            }
            var cues: [Cue] = []
            for (cueIndex, cue) in chapter.cues.enumerated() {
                cues.append(try Self.checked(cue, path: "\(chapterPath).cues[\(cueIndex)]", file: file, plays: &plays))
            }
            chapters.append(Chapter(number: chapter.chapter, title: chapter.title ?? "", cues: cues))
        }
        self.init(app: document.app ?? "", chapters: chapters)
    }

    /// One cue of the sheet, checked; `plays` counts the plays of every cue so far, this one's included.
    private static func checked(_ cue: SheetDocument.CueEntry, path: String, file: String, plays: inout Int)
        throws(CueSheetError) -> Cue
    {
        func fail(_ key: String, _ reason: String) -> CueSheetError {
            CueSheetError(file: file, path: "\(path).\(key)", reason: reason)
        }
        guard cue.time.isFinite, cue.time >= 0, cue.time <= latestTime else {
            throw fail("time", "must be a number of seconds from 0 to \(Int(latestTime)) (a day), found \(cue.time)")
        }
        guard isPatternName(cue.pattern) else {
            throw fail(
                "pattern",
                "'\(cue.pattern)' is not a pattern name (letters, digits, '_' and '-'; the file is Haptics/<name>.ahap)"
            )
        }
        let count = cue.count ?? 1
        guard count >= 1 else { throw fail("count", "must be 1 or more, found \(count)") }
        // Compared before adding, so that no count can overflow the sum.
        guard count <= maximumPlays - plays else {
            throw fail("count", "the sheet would play more than \(maximumPlays) patterns in all")
        }
        plays += count
        let interval = cue.interval ?? 0
        guard interval.isFinite, interval >= 0 else {
            throw fail("interval", "must be a number of seconds >= 0, found \(interval)")
        }
        if count > 1 && interval <= 0 {
            throw fail("interval", "a cue played \(count) times needs an interval > 0 seconds")
        }
        guard cue.time + Double(count - 1) * interval <= latestTime else {
            throw fail(
                "interval", "the last of \(count) plays \(interval) s apart is later than \(Int(latestTime)) s (a day)")
        }
        return Cue(time: cue.time, pattern: cue.pattern, moment: cue.moment ?? "", count: count, interval: interval)
    }

    /// Pattern names become file names: no separators, no dots, nothing a shell would trip on.
    static func isPatternName(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                        || scalar == "-")
            }
    }
}

/// The file's JSON shape; `CueSheet` is the checked model built from it. Keys it does not know are ignored, and
/// of a key given twice the last counts.
private struct SheetDocument {
    struct ChapterEntry {
        var chapter: Int
        var title: String?
        var cues: [CueEntry]
    }

    struct CueEntry {
        var time: Double
        var pattern: String
        var moment: String?
        var count: Int?
        var interval: Double?
    }

    /// A value of the wrong kind, or a required key missing: where, and what was expected.
    struct Mismatch: Error {
        var path: String
        var reason: String
    }

    var version: Int
    var app: String?
    var chapters: [ChapterEntry]

    init(_ value: JSONValue) throws(Mismatch) {
        let top = try Self.object(value, at: "")
        version = try Self.wholeNumber(Self.required("version", in: top, at: ""), at: "version")
        app = try top["app"].map { value throws(Mismatch) in try Self.string(value, at: "app") }
        let list = try Self.array(Self.required("chapters", in: top, at: ""), at: "chapters")
        chapters = []
        for (index, chapter) in list.enumerated() {
            chapters.append(try Self.chapter(chapter, at: "chapters[\(index)]"))
        }
    }

    private static func chapter(_ value: JSONValue, at path: String) throws(Mismatch) -> ChapterEntry {
        let object = try object(value, at: path)
        let number = try wholeNumber(required("chapter", in: object, at: path), at: "\(path).chapter")
        let title = try object["title"].map { value throws(Mismatch) in try string(value, at: "\(path).title") }
        var cues: [CueEntry] = []
        for (index, cue) in try array(required("cues", in: object, at: path), at: "\(path).cues").enumerated() {
            cues.append(try Self.cue(cue, at: "\(path).cues[\(index)]"))
        }
        return ChapterEntry(chapter: number, title: title, cues: cues)
    }

    private static func cue(_ value: JSONValue, at path: String) throws(Mismatch) -> CueEntry {
        let object = try object(value, at: path)
        return CueEntry(
            time: try number(required("time", in: object, at: path), at: "\(path).time"),
            pattern: try string(required("pattern", in: object, at: path), at: "\(path).pattern"),
            moment: try object["moment"].map { value throws(Mismatch) in try string(value, at: "\(path).moment") },
            count: try object["count"].map { value throws(Mismatch) in
                try wholeNumber(value, at: "\(path).count", clamping: true)
            },
            interval: try object["interval"].map { value throws(Mismatch) in
                try number(value, at: "\(path).interval")
            })
    }

    private static func required(_ key: String, in object: JSONValue, at path: String) throws(Mismatch) -> JSONValue {
        guard let value = object[key] else { throw Mismatch(path: path, reason: "missing required key \"\(key)\"") }
        return value
    }

    private static func object(_ value: JSONValue, at path: String) throws(Mismatch) -> JSONValue {
        guard case .object = value else { throw mismatch(value, at: path, expected: "an object") }
        return value
    }

    private static func array(_ value: JSONValue, at path: String) throws(Mismatch) -> [JSONValue] {
        guard case .array(let elements) = value else { throw mismatch(value, at: path, expected: "an array") }
        return elements
    }

    private static func string(_ value: JSONValue, at path: String) throws(Mismatch) -> String {
        guard case .string(let text) = value else { throw mismatch(value, at: path, expected: "a string") }
        return text
    }

    private static func number(_ value: JSONValue, at path: String) throws(Mismatch) -> Double {
        guard case .number(let number) = value else { throw mismatch(value, at: path, expected: "a number") }
        return number
    }

    /// A number without a fraction that an `Int` holds; with `clamping`, a larger one is taken as `Int.max` (a
    /// count, which the sheet's limit on plays then refuses with its reason).
    private static func wholeNumber(
        _ value: JSONValue, at path: String, clamping: Bool = false
    ) throws(Mismatch) -> Int {
        let number = try number(value, at: path)
        guard number.isFinite, number.rounded(.towardZero) == number else {
            throw Mismatch(path: path, reason: "expected a whole number, found \(number)")
        }
        if let whole = Int(exactly: number) { return whole }
        guard clamping, number > 0 else {
            throw Mismatch(path: path, reason: "expected a whole number, found \(number), which is out of range")
        }
        return .max
    }

    private static func mismatch(_ value: JSONValue, at path: String, expected: String) -> Mismatch {
        Mismatch(path: path, reason: "expected \(expected), found \(value.kindName)")
    }
}
