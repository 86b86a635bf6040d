// swift-tools-version:6.1
import Foundation
import PackageDescription

/// Every target: a member of a module is visible only where that module is imported, so
/// "only MarginSQLite sees GRDB" is checked by the compiler.
/// Release builds reach generic types' metadata through accessors, not mangled names: a
/// mangled name is decoded at the first use, and each generic requirement it names
/// (`Set<Int64>`: Int64 is Hashable) is a conformance question, which Linux answers by scanning
/// all of the binary's 7,300 conformances, about 300,000 instructions each time.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .unsafeFlags(
        ["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
]

/// What a command prints, or nil when it can't be run or fails.
func commandOutput(_ arguments: [String]) -> String? {
    let process = Process()
    let pipe = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Where poppler-glib's headers are (pkg-config's answer, Debian's layout if it can't say). Only
/// the headers: margin binds poppler's functions at run time (CPopplerLoader), so nothing links
/// against poppler and commands that never open a PDF start without loading it.
let popplerHeaders: [SwiftSetting] = {
    var flags =
        commandOutput(["pkg-config", "--cflags-only-I", "poppler-glib"])?.split(separator: " ").map(String.init)
        .filter { $0.hasPrefix("-I") } ?? []
    if flags.isEmpty {
        #if arch(arm64)
            let triple = "aarch64-linux-gnu"
        #else
            let triple = "x86_64-linux-gnu"
        #endif
        flags = [
            "/usr/include/poppler/glib", "/usr/include/poppler", "/usr/include/glib-2.0",
            "/usr/lib/\(triple)/glib-2.0/include", "/usr/include/cairo",
        ].map { "-I" + $0 }
    }
    return [.unsafeFlags(flags.flatMap { ["-Xcc", $0] })]
}()

/// A folder holding only a link to g++'s `libstdc++.a`, so that the linker, looking for
/// `-lstdc++` there first, finds no shared library beside it and links the archive. Nil when
/// there is no archive to link (the executable then loads libstdc++.so, as before).
let staticLibstdcxxFolder: String? = {
    let ask = ["-print-file-name=libstdc++.a"]
    guard let archive = commandOutput(["c++"] + ask) ?? commandOutput(["clang"] + ask),
        archive.hasPrefix("/"), FileManager.default.fileExists(atPath: archive)
    else { return nil }
    let folder = Context.packageDirectory + "/.build/static-libstdc++"
    let link = folder + "/libstdc++.a"
    if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != archive {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: link)
        guard (try? FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: archive)) != nil
        else { return nil }
    }
    return folder
}()

/// How `margin` is linked on Linux, for start-up time:
/// - swiftc exports every symbol of an executable (53,000 here); the dynamic loader and the
///   runtime's start-up `dladdr` then search them all. Nothing loads symbols from margin, so it
///   exports none: about 1 ms off every command's start.
/// - Release builds are position-independent (ASLR: the server reads untrusted PDFs, and the
///   executable's own image is placed at random like everything else). It costs start-up time:
///   148,000 relocations applied at every start, about 2.5 ms of a `--version`. The Swift runtime
///   is linked in. `MARGIN_NO_PIE=1` at build time links at a fixed address instead, for
///   measuring that cost; never for a build people run.
/// - libstdc++ and libgcc (which the Swift runtime needs) are linked in too: loading
///   libstdc++.so and binding its symbols took the dynamic loader 2.6 million cycles at every
///   start, 0.4 million without it (LD_DEBUG=statistics); `--version` 6.3–7.5 → 4.6–5.2 ms on
///   this noisy machine. poppler, loaded only by commands that read a PDF, brings its own
///   libstdc++.so; margin's copy is not exported (above), so neither sees the other.
let marginLinkerSettings: [LinkerSetting] = {
    var settings: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux]))]
    var flags = ["-static-stdlib"]
    if ProcessInfo.processInfo.environment["MARGIN_NO_PIE"] == "1" { flags += ["-Xclang-linker", "-no-pie"] }
    if let staticLibstdcxxFolder {
        flags += ["-L", staticLibstdcxxFolder, "-Xclang-linker", "-static-libgcc"]
    }
    settings.append(.unsafeFlags(flags, .when(platforms: [.linux], configuration: .release)))
    return settings
}()

let package = Package(
    name: "Margin",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "margin", targets: ["margin"]),
        .executable(name: "margin-full", targets: ["margin-full"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        // No default traits: the reader needs neither swift-configuration nor full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.20.0", traits: []),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.25.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
    ],
    targets: [
        // C shims
        .systemLibrary(
            name: "CPoppler",
            providers: [.apt(["libpoppler-glib-dev"])]
        ),

        // poppler-glib's functions as trampolines, bound by dlopen when the first PDF is opened.
        .target(name: "CPopplerLoader"),

        // An FTS5 ranking function (C: FTS5's extension API is a table of C function pointers).
        .target(name: "CFTS5", linkerSettings: [.linkedLibrary("sqlite3")]),

        // Libraries
        .target(
            name: "Poppler",
            dependencies: ["MarginCore", "CPoppler", "CPopplerLoader"],
            swiftSettings: strict + popplerHeaders
        ),
        // What poppler-glib can't write into a PDF (an outline, document-level notes), through
        // qpdf's C API, loaded when first needed.
        .target(
            name: "QPDF",
            dependencies: [],
            swiftSettings: strict
        ),
        // HTML (Zotero's notes) and XML (XFDF) through libxml2's text reader, opened when first
        // needed; XML without DTDs or entities.
        .target(
            name: "Markup",
            dependencies: [],
            swiftSettings: strict
        ),
        // Optical character recognition: Tesseract 5's C API, opened when the first page is read.
        .target(
            name: "Tesseract",
            dependencies: ["MarginCore"],
            swiftSettings: strict
        ),
        // Stemming: the Snowball stemmers of libstemmer, opened when the first word is stemmed.
        .target(
            name: "Snowball",
            dependencies: ["MarginCore"],
            swiftSettings: strict
        ),
        // Models, text folding, errors and the ports (store, text index, blobs, downloads).
        .target(
            name: "MarginCore",
            dependencies: [],
            swiftSettings: strict
        ),
        // The SQLite backend: the only target that sees GRDB.
        .target(
            name: "MarginSQLite",
            dependencies: [
                "MarginCore",
                "CFTS5",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // The PostgreSQL backend (a team library): the only target that sees PostgresNIO.
        .target(
            name: "MarginPostgres",
            dependencies: [
                "MarginCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // The use cases over the ports, files, downloads and poppler.
        .target(
            name: "MarginKit",
            dependencies: [
                "MarginCore",
                "QPDF",
                "Markup",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Downloads over HTTP(S): the `Downloader` port with AsyncHTTPClient.
        .target(
            name: "MarginNetwork",
            dependencies: [
                "MarginKit",
                "MarginCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        // The second front end: the reader in a browser (`margin serve`), over the same use cases.
        .target(
            name: "MarginServe",
            dependencies: [
                "MarginKit",
                "MarginCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // The CLI: every command, over whatever `Services` the executable running it has.
        .target(
            name: "MarginCLI",
            dependencies: [
                "MarginKit",
                "MarginCore",
                "MarginSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // `margin`: the CLI on a library on this machine; hands the rest to margin-full.
        .executableTarget(
            name: "margin",
            dependencies: ["MarginCLI", "MarginCore", "Poppler", "Snowball", "Tesseract"],
            swiftSettings: strict,
            linkerSettings: marginLinkerSettings
        ),
        // `margin-full`: the CLI with downloads, team libraries and the reader's server.
        .executableTarget(
            name: "margin-full",
            dependencies: [
                "MarginCLI", "MarginCore", "MarginNetwork", "MarginPostgres", "MarginServe", "Poppler", "Snowball",
                "Tesseract",
            ],
            swiftSettings: strict,
            linkerSettings: marginLinkerSettings
        ),

        // Tests
        .target(
            name: "TestSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "PopplerTests", dependencies: ["Poppler", "MarginCore", "TestSupport"]),
        .target(
            name: "StoreConformance",
            dependencies: ["MarginCore"],
            path: "Tests/StoreConformance",
            swiftSettings: strict
        ),
        .testTarget(
            name: "MarginSQLiteTests",
            dependencies: [
                "MarginSQLite", "MarginCore", "StoreConformance", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "MarginKitTests",
            dependencies: ["MarginKit", "MarginCore", "MarginSQLite", "Poppler", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "MarginPostgresTests",
            dependencies: [
                "MarginPostgres", "MarginCore", "StoreConformance", "TestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "MarginServeTests",
            dependencies: [
                "MarginServe", "MarginKit", "MarginCore", "MarginSQLite", "Poppler", "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "MarginCLITests",
            dependencies: [
                "margin", "margin-full", "MarginCLI", "MarginKit", "MarginCore", "MarginSQLite", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
    ]
)
