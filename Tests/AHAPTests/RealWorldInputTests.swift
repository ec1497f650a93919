import Foundation
import Testing
@testable import AHAP

#if canImport(Glibc)
import Glibc
#endif

/// What real files and hostile ones hold besides broken syntax: `null` for optional keys (Apple's samples write
/// `"EventWaveformPath": null`), times past `HapticPattern.maximumTime`, and paths that are not AHAP files.
@Suite struct RealWorldInputTests {
    private static func document(event: String, extra: String = "") -> String {
        #"{"Version":1.0,"Pattern":[{"Event":{\#(event)}}\#(extra)]}"#
    }

    private static let transient = #""Time":0,"EventType":"HapticTransient""#

    /// Every optional key written as `null`: the document loads, the key reads as absent, and one `null-value`
    /// warning names its path.
    @Test(arguments: [
        ("EventWaveformPath", "Pattern[0].Event.EventWaveformPath"),
        ("EventDuration", "Pattern[0].Event.EventDuration"),
        ("EventParameters", "Pattern[0].Event.EventParameters"),
        ("EventWaveformUseVolumeEnvelope", "Pattern[0].Event.EventWaveformUseVolumeEnvelope"),
        ("EventWaveformLoopEnabled", "Pattern[0].Event.EventWaveformLoopEnabled"),
        ("Colour", "Pattern[0].Event.Colour"),
    ])
    func nullEventKeysReadAsAbsent(key: String, path: String) throws {
        let report = AHAPValidator.validate(data: Self.document(event: "\(Self.transient),\"\(key)\":null").utf8Data)
        let event = try #require(report.pattern?.events.first)
        #expect(report.diagnostics.map(\.code) == [.nullValue])
        #expect(report.diagnostics.first?.path == path)
        #expect(report.diagnostics.first?.severity == .warning)
        #expect(event.waveformPath == nil && event.duration == nil && event.parameters.isEmpty)
        #expect(event.waveformUsesVolumeEnvelope == nil && event.waveformLoopEnabled == nil)
    }

    /// `null` in a dictionary (Foundation's `NSNull`, as `JSONSerialization` reads it) is `null` in text too: the
    /// same warning and the same pattern.
    @Test func nullInADictionaryReadsAsInText() throws {
        let text = Self.document(event: "\(Self.transient),\"EventWaveformPath\":null").utf8Data
        let object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        let fromDictionary = AHAPValidator.validate(dictionary: object)
        #expect(fromDictionary.diagnostics.map(\.code) == [.nullValue])
        #expect(fromDictionary.diagnostics.first?.path == "Pattern[0].Event.EventWaveformPath")
        #expect(fromDictionary.pattern == AHAPValidator.validate(data: text).pattern)
    }

    @Test func nullDocumentKeysReadAsAbsent() throws {
        let json = #"""
            {"Version":null,"Metadata":{"Project":null,"Created":"today"},"Pattern":[
              {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.5,
                        "EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.5}]}},
              {"Parameter":{"ParameterID":"HapticIntensityControl","Time":0.1,"ParameterValue":0.5,"Extra":null}},
              {"ParameterCurve":{"ParameterID":"HapticSharpnessControl","Time":0,"Extra":null,
                "ParameterCurveControlPoints":[{"Time":0,"ParameterValue":0,"Extra":null}]}},
              {"Event":null}
            ]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        let pattern = try #require(report.pattern)
        let nulls = report.diagnostics.filter { $0.code == .nullValue }.map(\.path)
        #expect(
            nulls == [
                "Version", "Metadata.Project", "Pattern[1].Parameter.Extra", "Pattern[2].ParameterCurve.Extra",
                "Pattern[2].ParameterCurve.ParameterCurveControlPoints[0].Extra", "Pattern[3].Event",
            ])
        #expect(report.errors.isEmpty)
        #expect(report.diagnostics.contains { $0.code == .missingVersion })
        #expect(report.diagnostics.contains { $0.code == .emptyEntry && $0.path == "Pattern[3]" })
        #expect(pattern.version == nil)
        #expect(pattern.metadata?.entries == ["Created": "today"])
        #expect(pattern.events.count == 1 && pattern.dynamicParameters.count == 1 && pattern.parameterCurves.count == 1)
    }

    /// A required key written as `null` is missing: the warning, then the error the absent key gives.
    @Test(arguments: [
        (#""Time":null,"EventType":"HapticTransient""#, AHAPDiagnostic.Code.missingKey),
        (#""Time":0,"EventType":null"#, .missingKey),
        (#""Time":0,"EventType":"AudioCustom","EventWaveformPath":null"#, .missingWaveformPath),
        (
            #""Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":null,"ParameterValue":1}]"#,
            .missingKey
        ),
    ])
    func nullRequiredKeysAreMissing(event: String, code: AHAPDiagnostic.Code) {
        let report = AHAPValidator.validate(data: Self.document(event: event).utf8Data)
        #expect(!report.loads)
        #expect(report.errors.map(\.code) == [code])
        #expect(report.warnings.map(\.code) == [.nullValue])
    }

    @Test func nullPatternIsNoPattern() {
        let report = AHAPValidator.validate(data: #"{"Version":1,"Pattern":null}"#.utf8Data)
        #expect(report.errors.map(\.code) == [.emptyPattern])
        #expect(report.warnings.map(\.code) == [.nullValue])
    }

    // MARK: Times

    /// Times past the bound, wherever they are, are one `time-too-large` error at their path; the bound itself
    /// loads.
    @Test(arguments: [
        (#"{"Event":{"Time":1e308,"EventType":"HapticTransient"}}"#, "Pattern[1].Event.Time"),
        (#"{"Event":{"EventTime":3600.001,"EventType":"HapticTransient"}}"#, "Pattern[1].Event.EventTime"),
        (
            #"{"Parameter":{"ParameterID":"HapticIntensityControl","Time":1e300,"ParameterValue":1}}"#,
            "Pattern[1].Parameter.Time"
        ),
        (
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":1e308,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1}]}}"#,
            "Pattern[1].ParameterCurve.Time"
        ),
        (
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1},{"Time":1e308,"ParameterValue":0}]}}"#,
            "Pattern[1].ParameterCurve.ParameterCurveControlPoints[1].Time"
        ),
        (
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":3000,"ParameterCurveControlPoints":[{"Time":700,"ParameterValue":1}]}}"#,
            "Pattern[1].ParameterCurve.ParameterCurveControlPoints[0].Time"
        ),
    ])
    func timesPastTheBoundAreRefused(entry: String, path: String) {
        let report = AHAPValidator.validate(data: Self.document(event: Self.transient, extra: "," + entry).utf8Data)
        #expect(!report.loads)
        #expect(report.errors.map(\.code) == [.timeTooLarge])
        #expect(report.errors.first?.path == path)
        #expect(report.errors.first?.message.contains("3600") == true)
    }

    @Test func theBoundItselfAndHugeDurationsLoad() throws {
        let json = Self.document(
            event: #""Time":3600,"EventType":"HapticContinuous","EventDuration":1e308"#,
            extra:
                #",{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":1800,"ParameterCurveControlPoints":[{"Time":1800,"ParameterValue":1}]}}"#
        )
        let report = AHAPValidator.validate(data: json.utf8Data)
        let pattern = try #require(report.pattern)
        #expect(report.warnings.map(\.code) == [.durationTooLong])
        #expect(pattern.duration == HapticPattern.maximumTime + HapticEvent.maximumContinuousDuration)
    }

    @Test func negativeAndOverflowingTimesKeepTheirOwnErrors() {
        let negative = AHAPValidator.validate(
            data: Self.document(event: #""Time":-1e308,"EventType":"HapticTransient""#).utf8Data)
        #expect(negative.errors.map(\.code) == [.negativeTime])
        let overflow = AHAPValidator.validate(
            data: Self.document(event: #""Time":1e309,"EventType":"HapticTransient""#).utf8Data)
        #expect(overflow.errors.map(\.code) == [.nonFiniteNumber])
        #expect(overflow.errors.first?.path == "Pattern[0].Event.Time")
    }

    /// A pattern built in code can hold what no file can: its diagnostics (what the engine checks) name it.
    @Test func builtPatternsWithExtremeNumbersAreDiagnosed() {
        let cases: [(HapticEvent, AHAPDiagnostic.Code)] = [
            (HapticEvent(type: .hapticTransient, relativeTime: 1e308), .timeTooLarge),
            (HapticEvent(type: .hapticTransient, relativeTime: .nan), .nonFiniteNumber),
            (HapticEvent(type: .hapticTransient, relativeTime: .infinity), .nonFiniteNumber),
            (HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: .nan), .nonFiniteNumber),
            (
                HapticEvent(
                    type: .hapticTransient,
                    parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: .nan)],
                    relativeTime: 0), .nonFiniteNumber
            ),
        ]
        for (event, code) in cases {
            let errors = HapticPattern(events: [event], parameters: []).validationDiagnostics().filter {
                $0.severity == .error
            }
            #expect(errors.map(\.code) == [code], "\(event)")
        }
        #expect(HapticPattern.isWithinTimeBound(HapticPattern.maximumTime))
        #expect(!HapticPattern.isWithinTimeBound(.nan) && !HapticPattern.isWithinTimeBound(-.infinity))
    }

    @Test func dictionariesMeetTheSameBound() {
        let report = AHAPValidator.validate(dictionary: [
            "Version": 1.0, "Pattern": [["Event": ["Time": 1e308, "EventType": "HapticTransient"]]],
        ])
        #expect(report.errors.map(\.code) == [.timeTooLarge])
    }

    // MARK: Files that are not AHAP files

    private static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-paths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func unreadableMessage(_ path: String) -> String? {
        let report = AHAPValidator.validate(contentsOf: URL(fileURLWithPath: path))
        #expect(report.errors.count == 1)
        return report.errors.first.map { "\($0.code.rawValue): \($0.message)" }
    }

    @Test func pathsSayWhatTheyAre() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipe = folder.appendingPathComponent("pipe.ahap").path
        #expect(mkfifo(pipe, 0o600) == 0)
        let dangling = folder.appendingPathComponent("dangling.ahap").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "/nonexistent/target")
        let loop = folder.appendingPathComponent("loop.ahap").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let linkToFolder = folder.appendingPathComponent("folder-link.ahap").path
        try FileManager.default.createSymbolicLink(atPath: linkToFolder, withDestinationPath: folder.path)
        let expected: [(String, String)] = [
            (folder.path, "unreadable-file: cannot read the file: it is a directory"),
            (linkToFolder, "unreadable-file: cannot read the file: it is a directory"),
            (pipe, "unreadable-file: cannot read the file: it is not a regular file (a pipe or a socket)"),
            ("/dev/zero", "unreadable-file: cannot read the file: it is a device, not a regular file"),
            (dangling, "unreadable-file: cannot read the file: it is a symbolic link that leads to no file"),
            (loop, "unreadable-file: cannot read the file: it is a symbolic link that leads to no file"),
            (folder.appendingPathComponent("absent.ahap").path, "unreadable-file: cannot read the file: no such file"),
        ]
        for (path, message) in expected {
            let found = Self.unreadableMessage(path)
            #expect(found?.hasPrefix(message) == true, "\(path): \(found ?? "")")
        }
    }

    /// A file of the kernel's `/proc`, whose size is 0 whatever it holds, is said to be one, unread: it was taken for
    /// an empty file and reported as "the document is empty".
    @Test func aProcFileIsSaidToBeMadeUpByTheKernelNotEmpty() throws {
        try #require(FileManager.default.fileExists(atPath: "/proc/self/status"), "/proc is not mounted")
        let refusal = "it is made up by the kernel as it is read (a /proc file), not a regular file"
        #expect(Self.unreadableMessage("/proc/self/status") == "unreadable-file: cannot read the file: \(refusal)")
        #expect(
            DocumentFile.read(URL(fileURLWithPath: "/proc/self/status"), maximumBytes: 1 << 20)
                == .failure(.unreadable(refusal)))
    }

    /// A file of sysfs is made up by the kernel as it is read as a /proc file is, whatever size it gives (4,096 for
    /// an attribute, 0 for many others): it was read, and reported as broken JSON ("unexpected '-'" for the CPUs
    /// online, `0-1`), or as an empty document.
    @Test func aSysfsFileIsSaidToBeMadeUpByTheKernelNotReadAsADocument() throws {
        let online = "/sys/devices/system/cpu/online"
        try #require(FileManager.default.fileExists(atPath: online), "sysfs is not mounted at /sys")
        let refusal = "it is made up by the kernel as it is read (a /sys file), not a regular file"
        #expect(Self.unreadableMessage(online) == "unreadable-file: cannot read the file: \(refusal)")
        #expect(DocumentFile.notRegular(online) == refusal)
    }

    /// The kernel's mount table names the file system of a device number: a `/proc` mounted a second time (on a
    /// device of its own) is a /proc as much as the first, a minor number past 255 is found, optional fields
    /// before the `-` are skipped, and a disk's or a tmpfs's file is nobody's made-up file.
    @Test func theMountTableNamesTheKernelMadeFileSystemOfADevice() {
        let table = """
            22 27 0:21 / /proc rw,relatime shared:5 - proc proc rw
            27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
            25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683772k
            45 27 0:40 / /tmp/p2 rw,relatime master:1 shared:9 - proc proc rw
            50 27 0:300 / /sys rw,relatime - sysfs sysfs rw
            """
        #expect(KernelMadeFiles.fileSystem(ofDevice: 0x15, mountTable: table) == "proc")
        #expect(KernelMadeFiles.fileSystem(ofDevice: 0x28, mountTable: table) == "proc")
        #expect(KernelMadeFiles.fileSystem(ofDevice: 0x10_002c, mountTable: table) == "sysfs")
        #expect(KernelMadeFiles.fileSystem(ofDevice: 0x17, mountTable: table) == nil)
        #expect(KernelMadeFiles.fileSystem(ofDevice: 0xfe00, mountTable: table) == nil)
        #expect(KernelMadeFiles.fileSystem(ofDevice: 0x99, mountTable: table) == nil)
    }

    /// A file over the size limit is refused from its size, before a byte is read (the file here is sparse).
    @Test func oversizedFilesAreRefusedUnread() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("huge.ahap")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 100 * 1024 * 1024)
        try handle.close()
        let report = AHAPValidator.validate(contentsOf: file)
        #expect(report.errors.map(\.code) == [.limitExceeded])
        #expect(report.errors.first?.message == "the file is 104857600 bytes, more than the limit of 16777216")
    }

    /// A file's size is read whatever integer type the file manager gives it in: FoundationEssentials gives `UInt`,
    /// which the reader took for no size at all (0), so that the `haptics` binary would have taken every file for
    /// empty once an empty file was no longer read.
    @Test func aFilesSizeIsReadFromEveryIntegerTypeTheFileManagerGives() {
        #expect(DocumentFile.byteCount(UInt(13)) == 13)
        #expect(DocumentFile.byteCount(13) == 13)
        #expect(DocumentFile.byteCount(UInt64(13)) == 13)
        #expect(DocumentFile.byteCount(Int64(13)) == 13)
        #expect(DocumentFile.byteCount("13") == nil && DocumentFile.byteCount(nil) == nil)
    }

    /// An empty file is the empty document, and a short one is read whole (an empty one is not read at all).
    @Test func anEmptyFileIsTheEmptyDocumentAndAShortOneIsReadWhole() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.ahap")
        let short = folder.appendingPathComponent("short.ahap")
        #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
        #expect(FileManager.default.createFile(atPath: short.path, contents: Data(#"{"Pattern": ["#.utf8)))
        #expect(AHAPValidator.validate(contentsOf: empty).errors.map(\.message) == ["the document is empty"])
        #expect(
            AHAPValidator.validate(contentsOf: short).errors.map(\.message) == [
                "the text ends where a value should start"
            ])
    }

    /// A file of mode 0 is denied to every user but root, and to root too once the read is made as `nobody`
    /// (`asNobodyWhenRoot`): the test runs the same as root, as CI does, and as anyone else.
    @Test func unreadableFilesSaySo() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("secret.ahap")
        try Data(Self.document(event: Self.transient).utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)
        let message = try Self.asNobodyWhenRoot { Self.unreadableMessage(file.path) }
        #expect(message == "unreadable-file: cannot read the file: permission denied")
    }

    /// Runs `body` with this thread's file-system user set to `nobody` when the process is root, whose reads
    /// ignore a file's mode, and restores it after. setfsuid(2) changes the calling thread alone (setuid(2) is
    /// applied by glibc to every thread, the other tests' too); Glibc's module does not import it, so it is
    /// looked up by name. `body` runs synchronously, so it stays on this thread.
    private static func asNobodyWhenRoot<Value>(_ body: () throws -> Value) throws -> Value {
        guard geteuid() == 0 else { return try body() }
        let process = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(process) }
        let symbol = try #require(dlsym(process, "setfsuid"))
        let setFileSystemUser = unsafeBitCast(symbol, to: (@convention(c) (UInt32) -> Int32).self)
        let nobody: UInt32 = 65534
        let previous = setFileSystemUser(nobody)
        defer { _ = setFileSystemUser(UInt32(bitPattern: previous)) }
        // setfsuid returns the user before the call: asked again, it says whether the first call took.
        try #require(setFileSystemUser(nobody) == Int32(bitPattern: nobody))
        return try body()
    }
}
