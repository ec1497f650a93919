import Foundation
import Testing

/// A layer that must stay pure: no C library, no device, no file. Files are read by LinuxSystem and the layers
/// above it (AHAPFiles reads AHAP documents).
enum PureLayer: String, CaseIterable, Sendable {
    case ahap = "AHAP"
    case hapticRendering = "HapticRendering"
    case audioRendering = "AudioRendering"

    /// Foundation (FoundationEssentials on Linux) for `Data`, and the pure layers below this one: its
    /// dependencies in Package.swift.
    var allowedImports: Set<String> {
        let foundation: Set<String> = ["Foundation", "FoundationEssentials"]
        switch self {
        case .ahap: return foundation
        case .hapticRendering: return foundation.union(["AHAP"])
        case .audioRendering: return foundation.union(["AHAP", "HapticRendering"])
        }
    }

    /// Its `.swift` files, in subfolders too.
    func sourceFiles() throws -> [URL] {
        let folder = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources").appendingPathComponent(rawValue)
        let found = try #require(
            FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil), "no \(folder.path)")
        return found.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            .sorted { $0.path < $1.path }
    }
}

/// A source text put in a pure layer, and what `PureLayerScanner` must report of it: "line: what" each.
struct LayerSnippet: CustomTestStringConvertible, Sendable {
    let name: String
    let layer: PureLayer
    let source: String
    let expected: [String]

    init(_ name: String, in layer: PureLayer = .ahap, _ source: String, _ expected: [String] = []) {
        self.name = name
        self.layer = layer
        self.source = source
        self.expected = expected
    }

    var testDescription: String { name }
}

/// What a grep of the pure layers missed, and more of the same: each must be reported.
private let forbiddenSnippets: [LayerSnippet] = [
    .init("import LinuxSystem", "import LinuxSystem", ["1: import LinuxSystem"]),
    .init("@_spi import", "@_spi(Testing) import LinuxSystem", ["1: import LinuxSystem"]),
    .init("import CLinuxSystem", "package import CLinuxSystem", ["1: import CLinuxSystem"]),
    .init("import Darwin", "@_exported import Darwin", ["1: import Darwin"]),
    .init("import Musl", "@testable import Musl", ["1: import Musl"]),
    .init("import SystemPackage", "public import SystemPackage", ["1: import SystemPackage"]),
    .init("import struct", "import struct SystemPackage.FileDescriptor", ["1: import SystemPackage"]),
    .init("import func", "internal import func Glibc.open", ["1: import Glibc"]),
    .init("AHAP above itself", "import HapticRendering", ["1: import HapticRendering"]),
    .init("HapticRendering above itself", in: .hapticRendering, "import AudioRendering", ["1: import AudioRendering"]),
    .init("AudioRendering on the sound card", in: .audioRendering, "import LinuxAudio", ["1: import LinuxAudio"]),
    .init("canImport(Glibc)", "#if canImport(Glibc)\nimport Glibc\n#endif", ["1: Glibc", "2: import Glibc"]),
    .init(
        "String.write(toFile:)", "try text.write(toFile: path, atomically: true, encoding: .utf8)", ["1: write(toFile:"]
    ),
    .init("Data( split over lines", "let data = try Data(\n    contentsOf: url)", ["2: Data(contentsOf:"]),
    .init(".init(contentsOf:)", "let data: Data = try .init(contentsOf: url)", ["1: init(contentsOf:"]),
    .init("Data.init(contentsOf:)", "let data = try Data.init(contentsOf: url)", ["1: init(contentsOf:"]),
    .init("String(contentsOf:encoding:)", "try String(contentsOf: url, encoding: .utf8)", ["1: String(contentsOf:"]),
    .init("String(contentsOfFile:)", "try String(contentsOfFile: path, encoding: .utf8)", ["1: contentsOfFile"]),
    .init(
        "contentsOfDirectory", "try FileManager.default.contentsOfDirectory(atPath: path)",
        ["1: FileManager", "1: contentsOfDirectory"]),
    .init("resolvingSymlinksInPath()", "let real = url.resolvingSymlinksInPath()", ["1: resolvingSymlinksInPath"]),
    .init("resourceValues(forKeys:)", "try url.resourceValues(forKeys: [.fileSizeKey])", ["1: resourceValues("]),
    .init("fopen", #"let file = fopen(path, "r")"#, ["1: fopen"]),
    .init("open(", "let descriptor = open(path, O_RDONLY)", ["1: open("]),
    .init(
        "the C library through import Foundation", "let pipe = popen(command, \"r\")\nlet home = getenv(name)",
        ["1: popen(", "2: getenv("]),
    .init("openat, stat", "let fd = openat(AT_FDCWD, path, 0)\n_ = stat(path, &info)", ["1: openat(", "2: stat("]),
    .init("Process, URLSession", "let p = Process()\nlet s = URLSession.shared", ["1: Process", "2: URLSession"]),
    .init(
        "the C library named through Foundation",
        "let home = Foundation.getenv(name)\nlet all = ProcessInfo.processInfo",
        ["1: getenv(", "2: ProcessInfo"]),
    .init("FileHandle", "let handle = FileHandle(forReadingAtPath: path)", ["1: FileHandle"]),
    .init(
        "FoundationEssentials' current folder and environment",
        "let here = URL.currentDirectory()\nlet home = URL.homeDirectory\nlet tmp = URL.temporaryDirectory",
        ["1: currentDirectory", "2: homeDirectory", "3: temporaryDirectory"]),
    .init(
        "a path made a URL", "let u = URL(filePath: path)\nlet v = URL(fileURLWithPath: path)",
        ["1: filePath", "2: fileURLWithPath"]),
    .init(
        "Data.init taken as a function",
        "let load: (URL, Data.ReadingOptions) throws -> Data = Data.init\nlet d = try load(url, [])",
        ["1: Data.init"]),
    .init(
        "InputStream, OutputStream", "InputStream(url: url)\nOutputStream(toFileAtPath: path, append: false)",
        ["1: InputStream", "2: OutputStream"]),
    .init(".write(to: url)", "try data.write(to: url)", ["1: .write(to:"]),
    .init(
        ".write(to:) split over lines", "try data\n    .write(\n        to: url, options: .atomic)", ["2: .write(to:"]),
    .init("a file reader's initializer", "public init(contentsOf url: URL) throws {}", ["1: contentsOf url: URL"]),
    .init(
        "a bare import Foundation (the C library with it)", "import Foundation\nlet n = 1",
        ["1: import Foundation outside the #else of #if canImport(FoundationEssentials)"]),
    .init(
        "import Foundation in another #if's #else",
        "#if os(macOS)\nimport FoundationEssentials\n#else\nimport Foundation\n#endif",
        ["4: import Foundation outside the #else of #if canImport(FoundationEssentials)"]),
    .init(
        "import Foundation in the #else of a condition that says more",
        "#if canImport(FoundationEssentials) && os(macOS)\nimport FoundationEssentials\n#else\nimport Foundation\n#endif",
        ["4: import Foundation outside the #else of #if canImport(FoundationEssentials)"]),
    .init(
        "import Foundation where FoundationEssentials is",
        "#if canImport(FoundationEssentials)\nimport Foundation\n#endif",
        ["2: import Foundation outside the #else of #if canImport(FoundationEssentials)"]),
    .init(
        "a name in backticks", "import `Glibc`\nlet fd = `Glibc`.open(path, O_RDONLY)",
        ["1: import Glibc", "2: Glibc", "2: open("]),
    .init(
        "the C library's reads and writes",
        "let n = read(fd, &b, 8)\n_ = close(fd)\n_ = unlink(path)\nlet f = fdopen(fd, \"r\")\n_ = fputs(\"x\", f)",
        ["1: read(", "2: close(", "3: unlink(", "4: fdopen(", "5: fputs("]),
    .init("Bundle", "let path = Bundle.main.path(forResource: n, ofType: t)", ["1: Bundle"]),
    .init("a file reader's method", "static func validate(\n    contentsOf url: URL) {}", ["2: contentsOf url: URL"]),
    .init(
        "code in an interpolation", #"let here = "in \(FileManager.default.currentDirectoryPath)""#,
        ["1: FileManager", "1: currentDirectoryPath"]),
    .init(
        "after escaped quotes", #"let s = "a \"quoted\" word"; let d = try Data(contentsOf: u)"#,
        ["1: Data(contentsOf:"]),
    .init("after a raw string", ##"let s = #"say "hi" \"#; let h = FileHandle.standardInput"##, ["1: FileHandle"]),
    .init("after a nested comment", "/* a /* b */ still a */ let m = FileManager.default", ["1: FileManager"]),
    .init(
        "after a multi-line string",
        "let s = \"\"\"\n    \"quoted\" FileManager\n    \"\"\"\nlet h = FileHandle.standardError",
        ["4: FileHandle"]),
    .init(
        "a string left open", "let s = \"no end\nlet m = FileManager.default",
        ["2: FileManager", "1: a string literal that does not close"]),
]

/// What a grep of the pure layers took for I/O, and more of the same: none may be reported.
private let pureSnippets: [LayerSnippet] = [
    .init("Glibc in a block comment", "/* no Glibc here */"),
    .init("Glibc in a line comment", "let x = 1 // not Glibc"),
    .init("FileManager in a string", #"let hint = "use FileManager elsewhere""#),
    .init("an inout writer", "try writer.write(to: &buffer)"),
    .init("a doc comment", "/// Like Data(contentsOf:), on bytes: no FileManager, no fopen.\nlet x = 1"),
    .init(
        "a multi-line string",
        "let help = \"\"\"\n    FileHandle.standardError.write(to: url)\n    open(path)\n    \"\"\""),
    .init("a raw string", ##"let s = #"Data(contentsOf: "url") and import Glibc"#"##),
    .init("a raw multi-line string", "let s = ##\"\"\"\n\"\"\"# still inside\nfopen(path)\n\"\"\"##"),
    .init("a nested comment", "/* outer /* FileHandle */ Darwin */ let x = 1"),
    .init("text beside an interpolation", #"let s = "\(count) files via FileManager, \("open(")""#),
    .init("an escaped quote", #"let s = "say \"open(\" twice""#),
    .init("append(contentsOf:)", "output.append(contentsOf: bytes)\nwords.append(\n    contentsOf: more)"),
    .init(
        "names that only contain a forbidden one",
        "struct Log: TextOutputStream { mutating func write(_ text: String) {} }\nlet isOpen = reopen(count)"),
    .init("a pure writer declared", "func write(to output: inout [UInt8]) {}\nopen class Reader {}"),
    .init("a method named open", "func open(_ door: Door) {}\nplayer.open(door)"),
    .init("a case named open", "enum Door { case open(Int) }"),
    .init(
        "a method of the type's own called on self",
        "struct Curve {\n    func read(_ i: Int) -> Float { 0 }\n    func sum() -> Float { read(0) + read(1) }\n}"),
    .init(
        "a local closure named close",
        "let close = { (a: Float, b: Float) in abs(a - b) < 0.01 }\nlet same = close(x, y)"),
    .init("Data made from bytes", "let data = Data.init([1, 2])\nlet more = Data(bytes)"),
    .init(
        "AHAP's imports",
        "#if canImport(FoundationEssentials)\npackage import FoundationEssentials\n#else\n"
            + "package import Foundation\n#endif"),
    .init(
        "HapticRendering's imports", in: .hapticRendering,
        "public import AHAP\n#if canImport(FoundationEssentials)\nimport FoundationEssentials\n#else\n#if DEBUG\n"
            + "#endif\nimport Foundation\n#endif"),
    .init("a label that begins with contentsOf", "let contentsOffset = 4\ninit(contentsOf bytes: [UInt8]) {}"),
    .init(
        "AudioRendering's imports", in: .audioRendering,
        "@_spi(Testing) public import HapticRendering\nimport AHAP\nimport struct FoundationEssentials.Data"),
]

/// The pure layers (AHAP, HapticRendering, AudioRendering) import only Foundation and the pure layers below
/// them, and name neither the C library nor a file API: `PureLayerScanner` says exactly what it looks for, and
/// the snippet tables above hold it to what it must and must not report.
@Suite struct PureLayersTests {
    @Test(arguments: PureLayer.allCases)
    func layerImportsOnlyItsAllowListAndDoesNoIO(_ layer: PureLayer) throws {
        let files = try layer.sourceFiles()
        try #require(files.count >= 5, "\(layer.rawValue)'s sources not found")
        for file in files {
            let findings = PureLayerScanner.findings(
                in: try String(contentsOf: file, encoding: .utf8), allowedImports: layer.allowedImports)
            #expect(findings.isEmpty, "\(layer.rawValue)/\(file.lastPathComponent): \(findings)")
        }
    }

    @Test(arguments: forbiddenSnippets)
    func forbiddenSnippetIsReported(_ snippet: LayerSnippet) {
        #expect(reported(snippet) == snippet.expected)
    }

    @Test(arguments: pureSnippets)
    func pureSnippetIsNotReported(_ snippet: LayerSnippet) {
        #expect(reported(snippet) == [])
    }

    private func reported(_ snippet: LayerSnippet) -> [String] {
        PureLayerScanner.findings(in: snippet.source, allowedImports: snippet.layer.allowedImports)
            .map { "\($0.line): \($0.what)" }
    }
}
