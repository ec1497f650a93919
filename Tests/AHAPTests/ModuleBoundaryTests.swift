import Foundation
import Testing

/// The AHAP module is pure: it imports neither the C library nor any device code.
@Suite struct ModuleBoundaryTests {
    private static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/AHAP")

    private static let allowedModules: Set<String> = ["Foundation", "FoundationEssentials"]

    @Test func importsOnlyFoundation() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.sources, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        try #require(files.count >= 5, "AHAP sources not found at \(Self.sources.path)")
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard let importIndex = words.firstIndex(of: "import"), importIndex < words.count - 1,
                    words[..<importIndex].allSatisfy({
                        ["public", "internal", "package", "@testable", "@_exported"].contains($0)
                    })
                else { continue }
                let module = String(words[importIndex + 1]).split(separator: ".").first.map(String.init) ?? ""
                #expect(Self.allowedModules.contains(module), "\(file.lastPathComponent) imports \(module)")
            }
        }
    }
}
