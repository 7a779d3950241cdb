"""Per language: a small project, its exact definitions, function-to-function call edges and resolved imports.

Real tree-sitter extraction, real SQLite state (written with ``write_file_graph``, read back through
``open_state_ro``) and the searcher's own call resolution: nothing is mocked.
"""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest
from local_memory_indexer.graph import extract_file_graph, write_file_graph
from local_memory_indexer.state_db import open_state_rw
from local_memory_indexer.treesitter import language_for_path
from local_memory_search.graph import resolved_call_edges
from local_memory_shared.state import open_state_ro


def build(tmp_path: Path, files: dict[str, str]) -> sqlite3.Connection:
    """Extract and store every file's graph; return a read-only connection to the state DB."""
    db = tmp_path / "state.db"
    conn = open_state_rw(db)
    project_files = frozenset(files)
    conn.execute("BEGIN")
    for rel, text in files.items():
        language = language_for_path(rel)
        graph = extract_file_graph(rel, textwrap.dedent(text).lstrip("\n").encode(), language)
        write_file_graph(conn, rel, language, graph, [], project_files)
    conn.execute("COMMIT")
    conn.close()
    return open_state_ro(db)


def symbols(conn: sqlite3.Connection) -> set[tuple[str, str, str]]:
    return {tuple(r) for r in conn.execute("SELECT file_path, qualified_name, kind FROM symbols")}  # type: ignore[misc]


def calls(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    return {(caller, callee) for caller, callee, _how, _edge in resolved_call_edges(conn)}


def imports(conn: sqlite3.Connection) -> set[tuple[str, str, str | None]]:
    return {tuple(r) for r in conn.execute("SELECT file_path, module, resolved_path FROM import_edges")}  # type: ignore[misc]


CASES: dict[str, dict[str, object]] = {
    "python": {
        "files": {
            "pkg/__init__.py": "",
            "pkg/store.py": """
                import json

                class Store:
                    def save(self, item):
                        data = self.encode(item)
                        return json.dumps(data)

                    def encode(self, item):
                        return {"item": item}

                def open_store():
                    return Store()
            """,
            "pkg/main.py": """
                from pkg.store import open_store, Store
                from . import util

                def main():
                    store = open_store()
                    s = Store()
                    s.save(1)
                    util.log("saved")

                if __name__ == "__main__":
                    main()
            """,
            "pkg/util.py": """
                import os

                def log(msg):
                    print(msg)
                    return os.getcwd()
            """,
        },
        "symbols": {
            ("pkg/store.py", "Store", "class"),
            ("pkg/store.py", "Store.save", "method"),
            ("pkg/store.py", "Store.encode", "method"),
            ("pkg/store.py", "open_store", "function"),
            ("pkg/main.py", "main", "function"),
            ("pkg/util.py", "log", "function"),
        },
        "calls": {
            ("pkg/store.py:Store.save", "pkg/store.py:Store.encode"),
            ("pkg/store.py:open_store", "pkg/store.py:Store"),
            ("pkg/main.py:main", "pkg/store.py:open_store"),
            ("pkg/main.py:main", "pkg/store.py:Store"),
            ("pkg/main.py:main", "pkg/store.py:Store.save"),
            ("pkg/main.py:main", "pkg/util.py:log"),
            ("pkg/main.py:<module>", "pkg/main.py:main"),
        },
        "imports": {
            ("pkg/store.py", "json", None),
            ("pkg/main.py", "pkg.store", "pkg/store.py"),
            ("pkg/main.py", ".util", "pkg/util.py"),
            ("pkg/util.py", "os", None),
        },
    },
    "javascript": {
        "files": {
            "src/store.js": """
                import fs from 'fs';
                export class Store {
                  save(item) { const data = this.encode(item); fs.writeFileSync('x', data); }
                  encode(item) { return JSON.stringify(item); }
                }
                export function openStore() { return new Store(); }
            """,
            "src/main.js": """
                import { openStore, Store } from './store';
                import { log } from './util';
                export const main = () => {
                  const s = new Store();
                  s.save(openStore());
                  log('saved');
                };
                main();
            """,
            "src/util/index.js": """
                export function log(msg) { console.log(msg); }
            """,
        },
        "symbols": {
            ("src/store.js", "Store", "class"),
            ("src/store.js", "Store.save", "method"),
            ("src/store.js", "Store.encode", "method"),
            ("src/store.js", "openStore", "function"),
            ("src/main.js", "main", "function"),
            ("src/util/index.js", "log", "function"),
        },
        "calls": {
            ("src/store.js:Store.save", "src/store.js:Store.encode"),
            ("src/store.js:openStore", "src/store.js:Store"),
            ("src/main.js:main", "src/store.js:Store"),
            ("src/main.js:main", "src/store.js:Store.save"),
            ("src/main.js:main", "src/store.js:openStore"),
            ("src/main.js:main", "src/util/index.js:log"),
            ("src/main.js:<module>", "src/main.js:main"),
        },
        "imports": {
            ("src/store.js", "fs", None),
            ("src/main.js", "./store", "src/store.js"),
            ("src/main.js", "./util", "src/util/index.js"),
        },
    },
    "typescript": {
        "files": {
            "src/store.ts": """
                import * as path from 'path';
                export interface Saver { save(item: string): void; }
                export class Store implements Saver {
                  private dir: string = path.join('a', 'b');
                  save(item: string): void { this.encode(item); }
                  encode(item: string): string { return item.trim(); }
                }
                export function openStore(): Store { return new Store(); }
            """,
            "src/main.ts": """
                import { openStore, Store } from './store.js';
                export function main(store: Store): void {
                  store.save('x');
                  const other = openStore();
                }
            """,
        },
        "symbols": {
            ("src/store.ts", "Saver", "interface"),
            ("src/store.ts", "Store", "class"),
            ("src/store.ts", "Store.save", "method"),
            ("src/store.ts", "Store.encode", "method"),
            ("src/store.ts", "openStore", "function"),
            ("src/main.ts", "main", "function"),
        },
        "calls": {
            ("src/store.ts:Store.save", "src/store.ts:Store.encode"),
            ("src/store.ts:openStore", "src/store.ts:Store"),
            ("src/main.ts:main", "src/store.ts:Store.save"),
            ("src/main.ts:main", "src/store.ts:openStore"),
        },
        "imports": {
            ("src/store.ts", "path", None),
            ("src/main.ts", "./store.js", "src/store.ts"),
        },
    },
    "tsx": {
        "files": {
            "src/Button.tsx": """
                import React from 'react';
                export function Button(props: { label: string }) { return <button>{format(props.label)}</button>; }
                function format(s: string): string { return s.toUpperCase(); }
            """,
            "src/App.tsx": """
                import { Button } from './Button';
                export const App = () => <div><Button label="hi" /></div>;
            """,
        },
        "symbols": {
            ("src/Button.tsx", "Button", "function"),
            ("src/Button.tsx", "format", "function"),
            ("src/App.tsx", "App", "function"),
        },
        "calls": {
            ("src/Button.tsx:Button", "src/Button.tsx:format"),
            ("src/App.tsx:App", "src/Button.tsx:Button"),
        },
        "imports": {
            ("src/Button.tsx", "react", None),
            ("src/App.tsx", "./Button", "src/Button.tsx"),
        },
    },
    "go": {
        "files": {
            "go.mod": "module example.com/shop\n",
            "internal/store/store.go": """
                package store

                import "fmt"

                type Store struct{ dir string }

                func New(dir string) *Store { return &Store{dir: dir} }

                func (s *Store) Save(item string) error { s.encode(item); return fmt.Errorf("x") }

                func (s *Store) encode(item string) string { return item }
            """,
            "main.go": """
                package main

                import (
                    "fmt"

                    "example.com/shop/internal/store"
                )

                func main() { s := store.New("d"); run(s); fmt.Println("ok") }

                func run(s *store.Store) { s.Save("x") }
            """,
        },
        "symbols": {
            ("internal/store/store.go", "Store", "struct"),
            ("internal/store/store.go", "New", "function"),
            ("internal/store/store.go", "Store.Save", "method"),
            ("internal/store/store.go", "Store.encode", "method"),
            ("main.go", "main", "function"),
            ("main.go", "run", "function"),
        },
        "calls": {
            ("internal/store/store.go:Store.Save", "internal/store/store.go:Store.encode"),
            ("main.go:main", "internal/store/store.go:New"),
            ("main.go:main", "main.go:run"),
            ("main.go:run", "internal/store/store.go:Store.Save"),
        },
        "imports": {
            ("internal/store/store.go", "fmt", None),
            ("main.go", "fmt", None),
            ("main.go", "example.com/shop/internal/store", "internal/store"),
        },
    },
    "rust": {
        "files": {
            "src/main.rs": """
                mod store;
                use crate::store::Store;

                fn main() { let s = Store::new(); run(&s); println!("done"); }

                fn run(s: &Store) { s.save("x"); }
            """,
            "src/store.rs": """
                use std::fmt;

                pub struct Store { items: Vec<String> }

                pub type Items = Vec<String>;

                macro_rules! log_item { ($e:expr) => { println!("{}", $e) }; }

                impl Store {
                    pub fn new() -> Self { Store { items: Vec::new() } }
                    pub fn save(&self, item: &str) { self.encode(item); }
                    fn encode(&self, item: &str) -> String { item.to_string() }
                }
            """,
        },
        "symbols": {
            ("src/main.rs", "main", "function"),
            ("src/main.rs", "run", "function"),
            ("src/store.rs", "Store", "struct"),
            ("src/store.rs", "Items", "type"),
            ("src/store.rs", "log_item", "macro"),
            ("src/store.rs", "Store.new", "method"),
            ("src/store.rs", "Store.save", "method"),
            ("src/store.rs", "Store.encode", "method"),
        },
        "calls": {
            ("src/main.rs:main", "src/store.rs:Store.new"),
            ("src/main.rs:main", "src/main.rs:run"),
            ("src/main.rs:run", "src/store.rs:Store.save"),
            ("src/store.rs:Store.save", "src/store.rs:Store.encode"),
        },
        "imports": {
            ("src/main.rs", "self::store", "src/store.rs"),
            ("src/main.rs", "crate::store::Store", "src/store.rs"),
            ("src/store.rs", "std::fmt", None),
        },
    },
    "java": {
        "files": {
            "src/main/java/com/shop/store/Store.java": """
                package com.shop.store;

                import java.util.List;

                public class Store {
                  public Store() { }
                  public void save(String item) { encode(item); }
                  private String encode(String item) { return item.trim(); }
                  public static Store open() { return new Store(); }
                }
            """,
            "src/main/java/com/shop/App.java": """
                package com.shop;

                import com.shop.store.Store;

                public class App {
                  public static void main(String[] args) { Store s = Store.open(); s.save("x"); new App().run(); }
                  void run() { System.out.println("ok"); }
                }
            """,
        },
        "symbols": {
            ("src/main/java/com/shop/store/Store.java", "Store", "class"),
            ("src/main/java/com/shop/store/Store.java", "Store.Store", "method"),
            ("src/main/java/com/shop/store/Store.java", "Store.save", "method"),
            ("src/main/java/com/shop/store/Store.java", "Store.encode", "method"),
            ("src/main/java/com/shop/store/Store.java", "Store.open", "method"),
            ("src/main/java/com/shop/App.java", "App", "class"),
            ("src/main/java/com/shop/App.java", "App.main", "method"),
            ("src/main/java/com/shop/App.java", "App.run", "method"),
        },
        "calls": {
            (
                "src/main/java/com/shop/store/Store.java:Store.save",
                "src/main/java/com/shop/store/Store.java:Store.encode",
            ),
            (
                "src/main/java/com/shop/store/Store.java:Store.open",
                "src/main/java/com/shop/store/Store.java:Store",
            ),
            (
                "src/main/java/com/shop/App.java:App.main",
                "src/main/java/com/shop/store/Store.java:Store.open",
            ),
            (
                "src/main/java/com/shop/App.java:App.main",
                "src/main/java/com/shop/store/Store.java:Store.save",
            ),
            ("src/main/java/com/shop/App.java:App.main", "src/main/java/com/shop/App.java:App"),
            ("src/main/java/com/shop/App.java:App.main", "src/main/java/com/shop/App.java:App.run"),
        },
        "imports": {
            ("src/main/java/com/shop/store/Store.java", "java.util.List", None),
            (
                "src/main/java/com/shop/App.java",
                "com.shop.store.Store",
                "src/main/java/com/shop/store/Store.java",
            ),
        },
    },
    "kotlin": {
        "files": {
            "src/main/kotlin/shop/store/Store.kt": """
                package shop.store

                import kotlin.math.max

                class Store(private val dir: String) {
                    fun save(item: String) { encode(item) }
                    private fun encode(item: String): String = item.trim()
                    companion object { fun open(): Store = Store("d") }
                }

                fun helper(): Int = max(1, 2)

                typealias Items = List<String>
            """,
            "src/main/kotlin/shop/App.kt": """
                package shop

                import shop.store.Store
                import shop.store.helper

                fun main() { val s = Store.open(); s.save("x"); helper() }
            """,
        },
        "symbols": {
            ("src/main/kotlin/shop/store/Store.kt", "Store", "class"),
            ("src/main/kotlin/shop/store/Store.kt", "Items", "type"),
            ("src/main/kotlin/shop/store/Store.kt", "Store.save", "method"),
            ("src/main/kotlin/shop/store/Store.kt", "Store.encode", "method"),
            ("src/main/kotlin/shop/store/Store.kt", "Store.open", "method"),
            ("src/main/kotlin/shop/store/Store.kt", "helper", "function"),
            ("src/main/kotlin/shop/App.kt", "main", "function"),
        },
        "calls": {
            (
                "src/main/kotlin/shop/store/Store.kt:Store.save",
                "src/main/kotlin/shop/store/Store.kt:Store.encode",
            ),
            ("src/main/kotlin/shop/store/Store.kt:Store.open", "src/main/kotlin/shop/store/Store.kt:Store"),
            ("src/main/kotlin/shop/App.kt:main", "src/main/kotlin/shop/store/Store.kt:Store.open"),
            ("src/main/kotlin/shop/App.kt:main", "src/main/kotlin/shop/store/Store.kt:Store.save"),
            ("src/main/kotlin/shop/App.kt:main", "src/main/kotlin/shop/store/Store.kt:helper"),
        },
        "imports": {
            ("src/main/kotlin/shop/store/Store.kt", "kotlin.math.max", None),
            ("src/main/kotlin/shop/App.kt", "shop.store.Store", "src/main/kotlin/shop/store/Store.kt"),
            ("src/main/kotlin/shop/App.kt", "shop.store.helper", "src/main/kotlin/shop/store"),
        },
    },
    "c": {
        "files": {
            "src/store.h": """
                #ifndef STORE_H
                #define STORE_H
                #define STORE_MAX 64
                #define STORE_OK(n) ((n) >= 0 && (n) < STORE_MAX)
                typedef struct store_item store_item_t;
                typedef int (*store_cb)(const char *item);
                int store_save(const char *item);
                #endif
            """,
            "src/store.c": """
                #include <string.h>
                #include "store.h"
                static int encode(const char *item) { return (int)strlen(item); }
                int store_save(const char *item) { return STORE_OK(encode(item)); }
            """,
            "src/main.c": """
                #include <stdio.h>
                #include "store.h"
                int main(void) { store_save("x"); printf("ok\\n"); return 0; }
            """,
        },
        "symbols": {
            # macros with a value and typedef names; the bare include guard STORE_H is not one
            ("src/store.h", "STORE_MAX", "macro"),
            ("src/store.h", "STORE_OK", "macro"),
            ("src/store.h", "store_item_t", "type"),
            ("src/store.h", "store_cb", "type"),
            ("src/store.c", "encode", "function"),
            ("src/store.c", "store_save", "function"),
            ("src/main.c", "main", "function"),
        },
        "calls": {
            ("src/store.c:store_save", "src/store.c:encode"),
            ("src/store.c:store_save", "src/store.h:STORE_OK"),
            ("src/main.c:main", "src/store.c:store_save"),
        },
        "imports": {
            ("src/store.c", "string.h", None),
            ("src/store.c", "store.h", "src/store.h"),
            ("src/main.c", "stdio.h", None),
            ("src/main.c", "store.h", "src/store.h"),
        },
    },
    "cpp": {
        "files": {
            "src/store.hpp": """
                #pragma once
                #include <string>
                #define STORE_VERSION 2
                namespace shop { using std::swap; }
                using Item = std::string;
                template <typename T> using Batch = std::vector<T>;
                class Store {
                 public:
                  void save(const std::string& item);
                 private:
                  std::string encode(const std::string& item) { return item; }
                };
            """,
            "src/store.cpp": """
                #include "store.hpp"
                void Store::save(const std::string& item) { encode(item); }
            """,
            "src/main.cpp": """
                #include "store.hpp"
                #include <iostream>
                static void run(Store& s) { s.save("x"); }
                int main() { Store s; run(s); std::cout << "ok"; return 0; }
            """,
        },
        "symbols": {
            ("src/store.hpp", "STORE_VERSION", "macro"),
            ("src/store.hpp", "swap", "alias"),
            ("src/store.hpp", "Item", "type"),
            ("src/store.hpp", "Batch", "type"),
            ("src/store.hpp", "Store", "class"),
            ("src/store.hpp", "Store.encode", "method"),
            ("src/store.cpp", "Store.save", "method"),
            ("src/main.cpp", "run", "function"),
            ("src/main.cpp", "main", "function"),
        },
        "calls": {
            ("src/store.cpp:Store.save", "src/store.hpp:Store.encode"),
            ("src/main.cpp:run", "src/store.cpp:Store.save"),
            ("src/main.cpp:main", "src/main.cpp:run"),
        },
        "imports": {
            ("src/store.hpp", "string", None),
            ("src/store.cpp", "store.hpp", "src/store.hpp"),
            ("src/main.cpp", "store.hpp", "src/store.hpp"),
            ("src/main.cpp", "iostream", None),
        },
    },
    "csharp": {
        "files": {
            "Shop/Store/Store.cs": """
                using System;
                namespace Shop.Store {
                  public class Store {
                    public void Save(string item) { Encode(item); Console.WriteLine(item); }
                    private string Encode(string item) { return item.Trim(); }
                    public static Store Open() { return new Store(); }
                  }
                }
            """,
            "Shop/App.cs": """
                using Shop.Store;
                namespace Shop {
                  public static class App {
                    public static void Main() { var s = Store.Open(); s.Save("x"); }
                  }
                }
            """,
        },
        "symbols": {
            ("Shop/Store/Store.cs", "Store", "class"),
            ("Shop/Store/Store.cs", "Store.Save", "method"),
            ("Shop/Store/Store.cs", "Store.Encode", "method"),
            ("Shop/Store/Store.cs", "Store.Open", "method"),
            ("Shop/App.cs", "App", "class"),
            ("Shop/App.cs", "App.Main", "method"),
        },
        "calls": {
            ("Shop/Store/Store.cs:Store.Save", "Shop/Store/Store.cs:Store.Encode"),
            ("Shop/Store/Store.cs:Store.Open", "Shop/Store/Store.cs:Store"),
            ("Shop/App.cs:App.Main", "Shop/Store/Store.cs:Store.Open"),
            ("Shop/App.cs:App.Main", "Shop/Store/Store.cs:Store.Save"),
        },
        "imports": {
            ("Shop/Store/Store.cs", "System", None),
            ("Shop/App.cs", "Shop.Store", "Shop/Store"),
        },
    },
    "ruby": {
        "files": {
            "lib/shop/store.rb": """
                require 'json'
                module Shop
                  class Store
                    def save(item)
                      encode(item)
                    end

                    def encode(item)
                      JSON.generate(item)
                    end

                    def self.open
                      Store.new
                    end
                  end
                end
            """,
            "lib/shop.rb": """
                require_relative 'shop/store'

                def main
                  s = Shop::Store.open
                  s.save("x")
                  helper
                end

                def helper
                  puts "ok"
                end
            """,
        },
        "symbols": {
            ("lib/shop/store.rb", "Shop", "module"),
            ("lib/shop/store.rb", "Shop.Store", "class"),
            ("lib/shop/store.rb", "Shop.Store.save", "method"),
            ("lib/shop/store.rb", "Shop.Store.encode", "method"),
            ("lib/shop/store.rb", "Shop.Store.open", "method"),
            ("lib/shop.rb", "main", "function"),
            ("lib/shop.rb", "helper", "function"),
        },
        "calls": {
            ("lib/shop/store.rb:Shop.Store.save", "lib/shop/store.rb:Shop.Store.encode"),
            ("lib/shop/store.rb:Shop.Store.open", "lib/shop/store.rb:Shop.Store"),
            ("lib/shop.rb:main", "lib/shop/store.rb:Shop.Store.open"),
            ("lib/shop.rb:main", "lib/shop/store.rb:Shop.Store.save"),
            ("lib/shop.rb:main", "lib/shop.rb:helper"),
        },
        "imports": {
            ("lib/shop/store.rb", "json", None),
            ("lib/shop.rb", "shop/store", "lib/shop/store.rb"),
        },
    },
    "php": {
        "files": {
            "src/Store.php": """
                <?php
                namespace App;

                class Store {
                    public function save(string $item): void { $this->encode($item); }
                    private function encode(string $item): string { return strtoupper($item); }
                    public static function open(): Store { return new Store(); }
                }
            """,
            "src/main.php": """
                <?php
                require_once __DIR__ . '/Store.php';
                use App\\Store;

                function main(): void { $s = Store::open(); $s->save('x'); helper(); }
                function helper(): void { echo 'ok'; }
                main();
            """,
        },
        "symbols": {
            ("src/Store.php", "Store", "class"),
            ("src/Store.php", "Store.save", "method"),
            ("src/Store.php", "Store.encode", "method"),
            ("src/Store.php", "Store.open", "method"),
            ("src/main.php", "main", "function"),
            ("src/main.php", "helper", "function"),
        },
        "calls": {
            ("src/Store.php:Store.save", "src/Store.php:Store.encode"),
            ("src/Store.php:Store.open", "src/Store.php:Store"),
            ("src/main.php:main", "src/Store.php:Store.open"),
            ("src/main.php:main", "src/Store.php:Store.save"),
            ("src/main.php:main", "src/main.php:helper"),
            ("src/main.php:<module>", "src/main.php:main"),
        },
        "imports": {
            ("src/main.php", "/Store.php", "src/Store.php"),
            ("src/main.php", "App\\Store", "src/Store.php"),
        },
    },
    "scala": {
        "files": {
            "src/main/scala/shop/store/Store.scala": """
                package shop.store

                import scala.collection.mutable

                class Store(dir: String) {
                  def save(item: String): Unit = encode(item)
                  private def encode(item: String): String = item.trim
                }

                object Store {
                  type Items = List[String]
                  type Pending
                  def open(): Store = new Store("d")
                }
            """,
            "src/main/scala/shop/App.scala": """
                package shop

                import shop.store.Store

                object App {
                  def main(args: Array[String]): Unit = { val s = Store.open(); s.save("x"); run() }
                  def run(): Unit = println("ok")
                }
            """,
        },
        "symbols": {
            ("src/main/scala/shop/store/Store.scala", "Store", "class"),
            ("src/main/scala/shop/store/Store.scala", "Store.save", "method"),
            ("src/main/scala/shop/store/Store.scala", "Store.encode", "method"),
            ("src/main/scala/shop/store/Store.scala", "Store.open", "method"),
            # a type alias; the abstract `type Pending` declares, it does not define
            ("src/main/scala/shop/store/Store.scala", "Store.Items", "type"),
            ("src/main/scala/shop/App.scala", "App", "class"),
            ("src/main/scala/shop/App.scala", "App.main", "method"),
            ("src/main/scala/shop/App.scala", "App.run", "method"),
        },
        "calls": {
            (
                "src/main/scala/shop/store/Store.scala:Store.save",
                "src/main/scala/shop/store/Store.scala:Store.encode",
            ),
            (
                "src/main/scala/shop/store/Store.scala:Store.open",
                "src/main/scala/shop/store/Store.scala:Store",
            ),
            ("src/main/scala/shop/App.scala:App.main", "src/main/scala/shop/store/Store.scala:Store.open"),
            ("src/main/scala/shop/App.scala:App.main", "src/main/scala/shop/store/Store.scala:Store.save"),
            ("src/main/scala/shop/App.scala:App.main", "src/main/scala/shop/App.scala:App.run"),
        },
        "imports": {
            ("src/main/scala/shop/store/Store.scala", "scala.collection.mutable", None),
            ("src/main/scala/shop/App.scala", "shop.store.Store", "src/main/scala/shop/store/Store.scala"),
        },
    },
    "elixir": {
        "files": {
            "lib/shop/store.ex": """
                defmodule Shop.Store do
                  alias Shop.HTTPClient

                  def save(item) do
                    item |> encode() |> HTTPClient.post()
                  end

                  defp encode(nil), do: ""
                  defp encode(item), do: to_string(item)
                end
            """,
            "lib/shop/http_client.ex": """
                defmodule Shop.HTTPClient do
                  require Logger

                  def post(body) do
                    Logger.info(body)
                    apply(__MODULE__, :send_request, [body])
                  end

                  def send_request(body), do: body
                end
            """,
        },
        "symbols": {
            ("lib/shop/store.ex", "Shop.Store", "module"),
            ("lib/shop/store.ex", "Shop.Store.save", "method"),
            ("lib/shop/store.ex", "Shop.Store.encode", "method"),
            ("lib/shop/http_client.ex", "Shop.HTTPClient", "module"),
            ("lib/shop/http_client.ex", "Shop.HTTPClient.post", "method"),
            ("lib/shop/http_client.ex", "Shop.HTTPClient.send_request", "method"),
        },
        "calls": {
            ("lib/shop/store.ex:Shop.Store.save", "lib/shop/store.ex:Shop.Store.encode"),
            ("lib/shop/store.ex:Shop.Store.save", "lib/shop/http_client.ex:Shop.HTTPClient.post"),
        },
        "imports": {
            ("lib/shop/store.ex", "Shop.HTTPClient", "lib/shop/http_client.ex"),
            ("lib/shop/http_client.ex", "Logger", None),
        },
    },
    "haskell": {
        "files": {
            "src/Shop/Store.hs": """
                module Shop.Store (Store, save) where

                import qualified Data.Map as M

                data Store = Store (M.Map String Int)

                class Saver a where
                  persist :: a -> IO ()

                save :: Store -> String -> IO ()
                save s item = do
                  encode item
                  pure ()

                encode :: String -> IO ()
                encode "" = pure ()
                encode item = print item
            """,
            "app/Main.hs": """
                module Main where

                import Shop.Store (Store, save)

                main :: IO ()
                main = save undefined "x" >> run

                run = putStrLn "ok"
            """,
        },
        "symbols": {
            ("src/Shop/Store.hs", "Store", "type"),
            ("src/Shop/Store.hs", "Saver", "interface"),
            ("src/Shop/Store.hs", "save", "function"),
            ("src/Shop/Store.hs", "encode", "function"),
            ("app/Main.hs", "main", "function"),
            ("app/Main.hs", "run", "function"),
        },
        "calls": {
            ("src/Shop/Store.hs:save", "src/Shop/Store.hs:encode"),
            ("app/Main.hs:main", "src/Shop/Store.hs:save"),
        },
        "imports": {
            ("src/Shop/Store.hs", "Data.Map", None),
            ("app/Main.hs", "Shop.Store", "src/Shop/Store.hs"),
        },
    },
    "lua": {
        "files": {
            "lua/shop/store.lua": """
                -- the store
                local json = require("cjson")
                local M = {}

                local function encode(item)
                  return json.encode(item)
                end

                function M.save(item)
                  return encode(item)
                end

                function M:flush()
                  self:reset()
                end

                function M:reset() end

                return M
            """,
            "lua/shop/init.lua": """
                -- (a first statement `local x = f(...)` was an ERROR in tree-sitter-languages' Lua grammar)
                local store = require("shop.store")

                local function main()
                  store.save("x")
                end

                return { main = main }
            """,
        },
        "symbols": {
            ("lua/shop/store.lua", "encode", "function"),
            ("lua/shop/store.lua", "M.save", "method"),
            ("lua/shop/store.lua", "M.flush", "method"),
            ("lua/shop/store.lua", "M.reset", "method"),
            ("lua/shop/init.lua", "main", "function"),
        },
        "calls": {
            ("lua/shop/store.lua:M.save", "lua/shop/store.lua:encode"),
            ("lua/shop/store.lua:M.flush", "lua/shop/store.lua:M.reset"),
            ("lua/shop/init.lua:main", "lua/shop/store.lua:M.save"),
        },
        "imports": {
            ("lua/shop/store.lua", "cjson", None),
            ("lua/shop/init.lua", "shop.store", "lua/shop/store.lua"),
        },
    },
    "zig": {
        "files": {
            "src/store.zig": """
                const std = @import("std");

                pub const Store = struct {
                    count: u32,

                    pub fn init() Store {
                        return Store{ .count = 0 };
                    }

                    pub fn save(self: *Store, item: u32) void {
                        self.count += encode(item);
                    }
                };

                fn encode(item: u32) u32 {
                    return item;
                }
            """,
            "src/main.zig": """
                const store = @import("store.zig");

                pub fn main() void {
                    var s = store.Store.init();
                    run(&s);
                }

                fn run(s: *store.Store) void {
                    s.save(1);
                }
            """,
        },
        "symbols": {
            ("src/store.zig", "Store", "struct"),
            ("src/store.zig", "Store.init", "method"),
            ("src/store.zig", "Store.save", "method"),
            ("src/store.zig", "encode", "function"),
            ("src/main.zig", "main", "function"),
            ("src/main.zig", "run", "function"),
        },
        "calls": {
            ("src/store.zig:Store.save", "src/store.zig:encode"),
            ("src/main.zig:main", "src/store.zig:Store.init"),
            ("src/main.zig:main", "src/main.zig:run"),
            ("src/main.zig:run", "src/store.zig:Store.save"),
        },
        "imports": {
            ("src/store.zig", "std", None),
            ("src/main.zig", "store.zig", "src/store.zig"),
        },
    },
    "swift": {
        "files": {
            "Sources/Shop/Store.swift": """
                import Foundation

                public final class Store {
                    let path: String

                    public init(path: String) {
                        self.path = path
                    }

                    public func save(_ item: String) {
                        write(encode(item))
                    }

                    func write(_ data: Data) {}
                }

                extension Store {
                    func encode(_ item: String) -> Data {
                        Data(item.utf8)
                    }
                }

                struct Item {
                    let name: String
                }

                public typealias Items = [Item]

                protocol Saving {
                    func save(_ item: String)
                }
            """,
            "Sources/App/main.swift": """
                import Shop

                func run() {
                    let store = Store(path: "x")
                    store.save("a")
                    report()
                }

                func report() {
                    print("ok")
                }

                run()
            """,
        },
        "symbols": {
            ("Sources/Shop/Store.swift", "Store", "class"),
            ("Sources/Shop/Store.swift", "Store.init", "method"),
            ("Sources/Shop/Store.swift", "Store.save", "method"),
            ("Sources/Shop/Store.swift", "Store.write", "method"),
            # an extension is no symbol of its own: its functions are the extended type's methods
            ("Sources/Shop/Store.swift", "Store.encode", "method"),
            ("Sources/Shop/Store.swift", "Item", "struct"),
            ("Sources/Shop/Store.swift", "Items", "type"),
            # a protocol's requirement has no body: the protocol is defined, its requirement is not
            ("Sources/Shop/Store.swift", "Saving", "interface"),
            ("Sources/App/main.swift", "run", "function"),
            ("Sources/App/main.swift", "report", "function"),
        },
        "calls": {
            ("Sources/Shop/Store.swift:Store.save", "Sources/Shop/Store.swift:Store.write"),
            ("Sources/Shop/Store.swift:Store.save", "Sources/Shop/Store.swift:Store.encode"),
            # `Store(path:)` constructs: a call of the type, found without an import naming its file
            ("Sources/App/main.swift:run", "Sources/Shop/Store.swift:Store"),
            ("Sources/App/main.swift:run", "Sources/Shop/Store.swift:Store.save"),
            ("Sources/App/main.swift:run", "Sources/App/main.swift:report"),
            ("Sources/App/main.swift:<module>", "Sources/App/main.swift:run"),
        },
        # Swift imports name modules, never files: they stay unresolved
        "imports": {
            ("Sources/Shop/Store.swift", "Foundation", None),
            ("Sources/App/main.swift", "Shop", None),
        },
    },
    "bash": {
        "files": {
            "lib/util.sh": """
                log_msg() {
                  echo "$@" >&2
                }
            """,
            "bin/run.sh": """
                #!/usr/bin/env bash
                DIR="$(cd "$(dirname "$0")" && pwd)"
                source "$DIR/../lib/util.sh"

                function save() {
                  log_msg "saving $1"
                }

                main() {
                  save "$@"
                }

                main "$@"
            """,
        },
        "symbols": {
            ("lib/util.sh", "log_msg", "function"),
            ("bin/run.sh", "save", "function"),
            ("bin/run.sh", "main", "function"),
        },
        "calls": {
            ("bin/run.sh:save", "lib/util.sh:log_msg"),
            ("bin/run.sh:main", "bin/run.sh:save"),
            ("bin/run.sh:<module>", "bin/run.sh:main"),
        },
        "imports": {
            ("bin/run.sh", "$DIR/../lib/util.sh", "lib/util.sh"),
        },
    },
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    spec = CASES[request.param]
    conn = build(tmp_path_factory.mktemp(request.param), spec["files"])  # type: ignore[arg-type]
    yield spec, conn
    conn.close()


def test_every_language_of_the_foundation_has_a_case() -> None:
    from local_memory_indexer.graph import supported_languages
    from local_memory_indexer.treesitter import CODE_LANGUAGES

    assert supported_languages() == set(CASES)
    assert supported_languages() <= CODE_LANGUAGES  # every graph language is also chunked by definition


def test_definitions_are_exact(case) -> None:
    spec, conn = case
    assert symbols(conn) == spec["symbols"]


def test_call_edges_are_exact_function_to_function(case) -> None:
    spec, conn = case
    assert calls(conn) == spec["calls"]


def test_imports_resolve_to_project_files(case) -> None:
    spec, conn = case
    assert imports(conn) == spec["imports"]
