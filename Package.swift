// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Margin",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "margin", targets: ["margin"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    ],
    targets: [
        // C shims
        .systemLibrary(
            name: "CPoppler",
            pkgConfig: "poppler-glib",
            providers: [.apt(["libpoppler-glib-dev"])]
        ),

        // Libraries
        .target(
            name: "Poppler",
            dependencies: ["CPoppler"]
        ),
        .target(
            name: "MarginKit",
            dependencies: [
                "Poppler",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // The CLI
        .executableTarget(
            name: "margin",
            dependencies: [
                "MarginKit",
                "Poppler",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
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
        .testTarget(name: "PopplerTests", dependencies: ["Poppler", "TestSupport"]),
        .testTarget(name: "MarginKitTests", dependencies: ["MarginKit", "TestSupport"]),
        .testTarget(name: "MarginCLITests", dependencies: ["margin", "MarginKit", "TestSupport"]),
    ]
)
