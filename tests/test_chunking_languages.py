"""Per-language chunking: exact kinds, qualified names, owners and line ranges from real tree-sitter parses."""

from __future__ import annotations

import re

import pytest
from local_memory_indexer.chunking import ChunkDraft, chunk_file

PYTHON = """\
import os
from typing import Any

DEFAULT_TIMEOUT = 30


@dataclass
class Client:
    \"\"\"HTTP client.\"\"\"

    timeout: int = DEFAULT_TIMEOUT

    def send(self, path: str) -> Any:
        \"\"\"Send a request.\"\"\"
        url = self.base + path
        return fetch(url, timeout=self.timeout)

    # Close the pool.
    def close(self) -> None:
        self.pool.close()
        self.pool = None

    class Options:
        def merged(self, other):
            return {**self.__dict__, **other}


def main(argv: list[str]) -> int:
    client = Client()
    return client.send(argv[0])


if __name__ == "__main__":
    main(sys.argv)
"""

JAVASCRIPT = """\
import { readFile } from "fs";
const DEFAULT_TIMEOUT = 30;

/**
 * HTTP client.
 */
export class Client {
  timeout = DEFAULT_TIMEOUT;

  constructor(baseUrl) {
    this.baseUrl = baseUrl;
  }

  @logged
  async send(path, body) {
    const res = await fetch(this.baseUrl + path, { body });
    return res.json();
  }

  onClick = (e) => {
    this.last = e;
  };
}

// Parse a config file.
export function parseConfig(text) {
  return JSON.parse(text);
}

const helper = (x) => {
  return x * 2;
};

exports.legacy = function (a) {
  return a;
};
"""

TYPESCRIPT = """\
import { Request } from "./types";

export interface Transport {
  send(req: Request): Promise<Response>;
  close(): void;
}

export enum Mode {
  Fast,
  Slow,
}

type Id = string;

export default class HttpTransport implements Transport {
  private retries: number = 3;

  async send(req: Request): Promise<Response> {
    return fetch(req.url);
  }

  close(): void {
    this.retries = 0;
  }
}

export const makeTransport = (): Transport => {
  return new HttpTransport();
};
"""

TSX = """\
import React from "react";
import { useState } from "react";

interface ButtonProps {
  label: string;
  onClick: () => void;
}

/** A counter button. */
export class Counter extends React.Component<ButtonProps> {
  state = { count: 0 };

  increment(): void {
    this.setState({ count: this.state.count + 1 });
  }

  render() {
    return <button onClick={() => this.increment()}>{this.props.label}</button>;
  }
}

export function Label({ text }: { text: string }) {
  const [shown] = useState(true);
  return shown ? <span>{text}</span> : null;
}
"""

GO = """\
package client

import (
	"fmt"
	"net/http"
)

// Client talks to the API.
type Client struct {
	base string
	http *http.Client
}

// Send posts a request.
func (c *Client) Send(path string) error {
	_, err := c.http.Get(c.base + path)
	return err
}

func (c Client) Base() string {
	return c.base
}

func NewClient(base string) *Client {
	fmt.Println("new client")
	return &Client{base: base}
}

func (s *Stack[T]) Push(v T) {
	s.items = append(s.items, v)
}
"""

RUST = """\
use std::collections::HashMap;
use std::fmt;

/// A key-value store.
#[derive(Debug, Clone)]
pub struct Store {
    items: HashMap<String, String>,
}

impl Store {
    /// Create an empty store.
    pub fn new() -> Self {
        Store { items: HashMap::new() }
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.items.get(key)
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Store({})", self.items.len())
    }
}

pub trait Backend {
    fn load(&self) -> String;
    fn name(&self) -> &str {
        "backend"
    }
}

pub fn open(path: &str) -> Store {
    let _ = path;
    Store::new()
}

mod tests {
    #[test]
    fn it_works() {
        assert_eq!(2 + 2, 4);
    }
}
"""

JAVA = """\
package com.example.client;

import java.util.List;
import java.util.ArrayList;

/**
 * A simple client.
 */
@Service
public class Client {
    private final String base;
    private int retries = 3;

    public Client(String base) {
        this.base = base;
    }

    /** Send a request. */
    @Override
    public String send(String path) {
        return base + path;
    }

    interface Listener {
        void onEvent(String e);
    }

    static class Builder {
        Client build() {
            return new Client("x");
        }
    }
}
"""

C = """\
#include <stdio.h>
#include <stdlib.h>

#define MAX 10

/* A point in 2D. */
struct point {
    int x;
    int y;
};

typedef struct {
    char *name;
} person_t;

static int counter = 0;

/* Add two ints. */
int add(int a, int b) {
    return a + b;
}

int *alloc_ints(size_t n)
{
    return malloc(n * sizeof(int));
}

#ifdef DEBUG
void debug_log(const char *msg) {
    fprintf(stderr, "%s\\n", msg);
}
#endif
"""

CPP = """\
#include <string>
#include <vector>

namespace net {

// A TCP connection.
class Connection {
public:
    Connection(std::string host);
    void send(const std::string& data);
    int port() const { return port_; }

private:
    std::string host_;
    int port_ = 80;
};

Connection::Connection(std::string host) : host_(host) {
    open();
}

void Connection::send(const std::string& data) {
    write(data.c_str());
}

template <typename T>
T max_of(const std::vector<T>& xs) {
    return *std::max_element(xs.begin(), xs.end());
}

}  // namespace net

int main() {
    return 0;
}
"""

CSHARP = """\
using System;
using System.Collections.Generic;

namespace Example.Client
{
    /// <summary>A simple client.</summary>
    [Serializable]
    public class Client
    {
        private readonly string _base;

        public Client(string baseUrl)
        {
            _base = baseUrl;
        }

        public string Name { get; set; }

        /// <summary>Send a request.</summary>
        public string Send(string path)
        {
            return _base + path;
        }
    }

    public interface ITransport
    {
        void Close();
    }

    public static class Helpers
    {
        public static int Twice(int x)
        {
            return x * 2;
        }
    }
}
"""

RUBY = """\
require "json"
require_relative "base"

module Billing
  TAX = 0.2

  # An invoice.
  class Invoice < Base
    attr_reader :lines

    def initialize(lines)
      @lines = lines
    end

    def total
      lines.sum(&:amount) * (1 + TAX)
    end

    def self.load(path)
      new(JSON.parse(File.read(path)))
    end
  end
end

def helper(x)
  x * 2
end
"""

PHP = """\
<?php

namespace App\\Billing;

use App\\Models\\Invoice;

/**
 * Computes totals.
 */
class Calculator extends Base implements Totals
{
    private float $tax = 0.2;

    public function __construct(float $tax)
    {
        $this->tax = $tax;
    }

    public function total(Invoice $invoice): float
    {
        return $invoice->sum() * (1 + $this->tax);
    }
}

interface Totals
{
    public function total(Invoice $invoice): float;
}

function format_money(float $x): string
{
    return number_format($x, 2);
}
"""

KOTLIN = """\
package com.example.client

import kotlin.math.max
import java.io.File

/** A simple client. */
class Client(private val base: String) {
    private var retries = 3

    fun send(path: String): String {
        return base + path
    }

    @Deprecated("old")
    fun close() {
        retries = 0
    }

    companion object {
        fun create(): Client {
            return Client("x")
        }
    }
}

interface Transport {
    fun send(path: String): String
}

fun main(args: Array<String>) {
    println(max(1, 2))
}
"""

# (chunk_kind, symbol_name, class_name, function_name, start_line, end_line) in output order
SCALA = """\
package app.net

import scala.concurrent.Future

/** A simple client. */
class Client(base: String) extends Base {
  val timeout = 30

  // Send a request.
  def send(path: String): String = {
    val url = base + path
    fetch(url)
  }

  def close(): Unit = ()
}

object Client {
  def apply(base: String): Client =
    new Client(base)
}

trait Greeter {
  def greet(name: String): String
}

def helper(x: Int): Int = x * 2
"""

ELIXIR = """\
defmodule App.Client do
  @moduledoc "HTTP client."
  alias App.Http

  @doc "Send a request."
  def send(client, path) do
    url = client.base <> path
    Http.fetch(url)
  end

  def size([]), do: 0
  def size([_ | rest]), do: 1 + size(rest)

  defp close(client) when is_map(client) do
    :ok
  end
end
"""

HASKELL = """\
module App.Client where

import qualified Data.Map as Map

-- | A simple client.
data Client = Client
  { base :: String
  }

-- | Send a request.
send :: Client -> String -> IO String
send client path = do
  let url = base client ++ path
  fetch url

fact :: Int -> Int
fact 0 = 1
fact n = n * fact (n - 1)

class Shape a where
  area :: a -> Double
  describe :: a -> String
  describe _ = "shape"
"""

LUA = """\
-- HTTP client.
local Client = {}
Client.__index = Client

function Client.new(base)
  return setmetatable({ base = base }, Client)
end

-- Send a request.
function Client:send(path)
  local url = self.base .. path
  return fetch(url)
end

local function helper(x)
  return x * 2
end

return Client
"""

BASH = """\
#!/usr/bin/env bash
set -euo pipefail

# Print usage and exit.
usage() {
  echo "usage: $0 path"
  exit 1
}

function build {
  make -C "$1"
}

main() {
  [ $# -gt 0 ] || usage
  build "$1"
}

main "$@"
"""

ZIG = """\
//! Argument parsing.
const std = @import("std");

/// A parsed client.
pub const Client = struct {
    name: []const u8,

    /// Send a message.
    pub fn send(self: *Client, msg: []const u8) !void {
        _ = self;
        _ = msg;
    }
};

pub const Mode = enum { fast, slow };

fn helper(a: i32) i32 {
    return a + 1;
}

test "helper adds one" {
    try std.testing.expect(helper(1) == 2);
}
"""

SWIFT = """\
import Foundation

/// A simple client.
public final class Client {
    let store: Store

    init(store: Store) {
        self.store = store
    }

    // Send a request.
    @discardableResult
    func send(_ path: String) -> Int {
        let url = base + path
        return fetch(url)
    }

    deinit { store.flush() }
}

struct Point {
    var x: Int
    var y: Int
}

enum Mode {
    case fast, slow
}

protocol Transport {
    func send(_ path: String) -> Int
}

extension Client: Transport {
    func close() {
        store.flush()
        store.reset()
    }
}

#if canImport(Combine)
func helper(_ n: Int) -> Int {
    return n + 1
}
#endif
"""

EXPECTED = {
    "python": (
        PYTHON,
        [
            ("module", "", "", "", 1, 4),
            ("class", "Client", "Client", "", 7, 25),
            ("method", "Client.send", "Client", "send", 13, 16),
            ("method", "Client.close", "Client", "close", 18, 21),
            ("class", "Client.Options", "Options", "", 23, 25),
            ("method", "Client.Options.merged", "Options", "merged", 24, 25),
            ("function", "main", "", "main", 28, 30),
            ("module", "", "", "", 33, 34),
        ],
    ),
    "javascript": (
        JAVASCRIPT,
        [
            ("module", "", "", "", 1, 2),
            ("class", "Client", "Client", "", 4, 23),
            ("method", "Client.constructor", "Client", "constructor", 10, 12),
            ("method", "Client.send", "Client", "send", 14, 18),
            ("method", "Client.onClick", "Client", "onClick", 20, 22),
            ("function", "parseConfig", "", "parseConfig", 25, 28),
            ("function", "helper", "", "helper", 30, 32),
            ("function", "exports.legacy", "", "legacy", 34, 36),
        ],
    ),
    "typescript": (
        TYPESCRIPT,
        [
            ("module", "", "", "", 1, 1),
            ("interface", "Transport", "Transport", "", 3, 6),
            ("enum", "Mode", "Mode", "", 8, 11),
            ("module", "", "", "", 13, 13),
            ("class", "HttpTransport", "HttpTransport", "", 15, 25),
            ("method", "HttpTransport.send", "HttpTransport", "send", 18, 20),
            ("method", "HttpTransport.close", "HttpTransport", "close", 22, 24),
            ("function", "makeTransport", "", "makeTransport", 27, 29),
        ],
    ),
    "tsx": (
        TSX,
        [
            ("module", "", "", "", 1, 2),
            ("interface", "ButtonProps", "ButtonProps", "", 4, 7),
            ("class", "Counter", "Counter", "", 9, 20),
            ("method", "Counter.increment", "Counter", "increment", 13, 15),
            ("method", "Counter.render", "Counter", "render", 17, 19),
            ("function", "Label", "", "Label", 22, 25),
        ],
    ),
    "go": (
        GO,
        [
            ("module", "", "", "", 1, 6),
            ("struct", "Client", "Client", "", 8, 12),
            ("method", "Client.Send", "Client", "Send", 14, 18),
            ("method", "Client.Base", "Client", "Base", 20, 22),
            ("function", "NewClient", "", "NewClient", 24, 27),
            ("method", "Stack.Push", "Stack", "Push", 29, 31),
        ],
    ),
    "rust": (
        RUST,
        [
            ("module", "", "", "", 1, 2),
            ("struct", "Store", "Store", "", 4, 8),
            ("impl", "Store", "Store", "", 10, 19),
            ("method", "Store.new", "Store", "new", 11, 14),
            ("method", "Store.get", "Store", "get", 16, 18),
            ("impl", "Store", "Store", "", 21, 25),
            ("method", "Store.fmt", "Store", "fmt", 22, 24),
            ("trait", "Backend", "Backend", "", 27, 32),
            ("method", "Backend.name", "Backend", "name", 29, 31),
            ("function", "open", "", "open", 34, 37),
            ("namespace", "tests", "", "", 39, 44),
            ("function", "tests.it_works", "", "it_works", 40, 43),
        ],
    ),
    "java": (
        JAVA,
        [
            ("module", "", "", "", 1, 4),
            ("class", "Client", "Client", "", 6, 33),
            ("method", "Client.Client", "Client", "Client", 14, 16),
            ("method", "Client.send", "Client", "send", 18, 22),
            ("interface", "Client.Listener", "Listener", "", 24, 26),
            ("class", "Client.Builder", "Builder", "", 28, 32),
            ("method", "Client.Builder.build", "Builder", "build", 29, 31),
        ],
    ),
    "c": (
        C,
        [
            ("module", "", "", "", 1, 4),
            ("struct", "point", "point", "", 6, 10),
            ("struct", "person_t", "person_t", "", 12, 14),
            ("module", "", "", "", 16, 16),
            ("function", "add", "", "add", 18, 21),
            ("function", "alloc_ints", "", "alloc_ints", 23, 26),
            ("module", "", "", "", 28, 28),
            ("function", "debug_log", "", "debug_log", 29, 31),
        ],
    ),
    "cpp": (
        CPP,
        [
            ("module", "", "", "", 1, 4),
            ("class", "Connection", "Connection", "", 6, 16),
            ("method", "Connection.port", "Connection", "port", 11, 11),
            ("method", "Connection.Connection", "Connection", "Connection", 18, 20),
            ("method", "Connection.send", "Connection", "send", 22, 24),
            ("function", "max_of", "", "max_of", 26, 29),
            ("function", "main", "", "main", 33, 35),
        ],
    ),
    "csharp": (
        CSHARP,
        [
            ("module", "", "", "", 1, 5),
            ("class", "Client", "Client", "", 6, 24),
            ("method", "Client.Client", "Client", "Client", 12, 15),
            ("method", "Client.Send", "Client", "Send", 19, 23),
            ("interface", "ITransport", "ITransport", "", 26, 29),
            ("class", "Helpers", "Helpers", "", 31, 37),
            ("method", "Helpers.Twice", "Helpers", "Twice", 33, 36),
        ],
    ),
    "ruby": (
        RUBY,
        [
            ("module", "", "", "", 1, 2),
            ("namespace", "Billing", "Billing", "", 4, 23),
            ("class", "Billing.Invoice", "Invoice", "", 7, 22),
            ("method", "Billing.Invoice.initialize", "Invoice", "initialize", 11, 13),
            ("method", "Billing.Invoice.total", "Invoice", "total", 15, 17),
            ("method", "Billing.Invoice.load", "Invoice", "load", 19, 21),
            ("function", "helper", "", "helper", 25, 27),
        ],
    ),
    "php": (
        PHP,
        [
            ("module", "", "", "", 1, 5),
            ("class", "Calculator", "Calculator", "", 7, 23),
            ("method", "Calculator.__construct", "Calculator", "__construct", 14, 17),
            ("method", "Calculator.total", "Calculator", "total", 19, 22),
            ("interface", "Totals", "Totals", "", 25, 28),
            ("function", "format_money", "", "format_money", 30, 33),
        ],
    ),
    "kotlin": (
        KOTLIN,
        [
            ("module", "", "", "", 1, 4),
            ("class", "Client", "Client", "", 6, 24),
            ("method", "Client.send", "Client", "send", 10, 12),
            ("method", "Client.close", "Client", "close", 14, 17),
            ("method", "Client.create", "Client", "create", 20, 22),
            ("interface", "Transport", "Transport", "", 26, 28),
            ("function", "main", "", "main", 30, 32),
        ],
    ),
    "scala": (
        SCALA,
        [
            ("module", "", "", "", 1, 3),
            ("class", "Client", "Client", "", 5, 16),
            ("method", "Client.send", "Client", "send", 9, 13),
            ("method", "Client.close", "Client", "close", 15, 15),
            ("object", "Client", "Client", "", 18, 21),
            ("method", "Client.apply", "Client", "apply", 19, 21),
            ("trait", "Greeter", "Greeter", "", 23, 25),
            ("function", "helper", "", "helper", 27, 27),
        ],
    ),
    "elixir": (
        ELIXIR,
        [
            ("namespace", "App.Client", "App.Client", "", 1, 17),
            ("method", "App.Client.send", "App.Client", "send", 5, 9),
            # two clauses of one function are one chunk
            ("method", "App.Client.size", "App.Client", "size", 11, 12),
            ("method", "App.Client.close", "App.Client", "close", 14, 16),
        ],
    ),
    "haskell": (
        HASKELL,
        [
            ("module", "", "", "", 1, 3),
            ("type", "Client", "Client", "", 5, 8),
            # the type signature and the haddock comment above it belong to the function
            ("function", "send", "", "send", 10, 14),
            ("function", "fact", "", "fact", 16, 18),
            ("interface", "Shape", "Shape", "", 20, 23),
            ("method", "Shape.describe", "Shape", "describe", 21, 23),
        ],
    ),
    "lua": (
        LUA,
        [
            ("module", "", "", "", 1, 3),
            ("method", "Client.new", "Client", "new", 5, 7),
            ("method", "Client.send", "Client", "send", 9, 13),
            ("function", "helper", "", "helper", 15, 17),
            ("module", "", "", "", 19, 19),
        ],
    ),
    "bash": (
        BASH,
        [
            ("module", "", "", "", 1, 2),
            ("function", "usage", "", "usage", 4, 8),
            ("function", "build", "", "build", 10, 12),
            ("function", "main", "", "main", 14, 17),
            ("module", "", "", "", 19, 19),
        ],
    ),
    "zig": (
        ZIG,
        [
            ("module", "", "", "", 1, 2),
            # ``const Client = struct { ... }`` is the struct Client; its functions are its methods
            ("struct", "Client", "Client", "", 4, 13),
            ("method", "Client.send", "Client", "send", 8, 12),
            ("enum", "Mode", "Mode", "", 15, 15),
            ("function", "helper", "", "helper", 17, 19),
            ("module", "", "", "", 21, 23),
        ],
    ),
    "swift": (
        SWIFT,
        [
            ("module", "", "", "", 1, 1),
            ("class", "Client", "Client", "", 3, 19),
            ("method", "Client.init", "Client", "init", 7, 9),
            # the doc comment and the attribute above a method belong to it
            ("method", "Client.send", "Client", "send", 11, 16),
            ("method", "Client.deinit", "Client", "deinit", 18, 18),
            # struct, enum and extension are one node type: the keyword gives the kind
            ("struct", "Point", "Point", "", 21, 24),
            ("enum", "Mode", "Mode", "", 26, 28),
            # a protocol's requirements have no body: the protocol is one chunk
            ("interface", "Transport", "Transport", "", 30, 32),
            # an extension's functions are methods of the extended type
            ("impl", "Client", "Client", "", 34, 39),
            ("method", "Client.close", "Client", "close", 35, 38),
            ("module", "", "", "", 41, 41),
            ("function", "helper", "", "helper", 42, 44),
        ],
    ),
}

EXTENSIONS = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "tsx": "tsx",
    "go": "go",
    "rust": "rs",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "csharp": "cs",
    "ruby": "rb",
    "php": "php",
    "kotlin": "kt",
    "scala": "scala",
    "elixir": "ex",
    "haskell": "hs",
    "lua": "lua",
    "bash": "sh",
    "zig": "zig",
    "swift": "swift",
}
MARKER = re.compile(r"\s*(#|//|--) \.\.\. [\w.]+ \(lines (\d+)-(\d+)\)")


def _chunk(language: str) -> list[ChunkDraft]:
    source = EXPECTED[language][0]
    return chunk_file(f"src/sample.{EXTENSIONS[language]}", source.encode(), language)


def _shape(drafts: list[ChunkDraft]) -> list[tuple[str, str, str, str, int, int]]:
    return [
        (d.chunk_kind, d.symbol_name, d.class_name, d.function_name, d.start_line, d.end_line) for d in drafts
    ]


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_symbols_kinds_and_line_ranges(language: str) -> None:
    assert _shape(_chunk(language)) == EXPECTED[language][1]


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_chunk_text_is_the_source_at_its_lines(language: str) -> None:
    source_lines = EXPECTED[language][0].split("\n")
    drafts = _chunk(language)
    spans = {(d.start_line, d.end_line) for d in drafts}
    for draft in drafts:
        text_lines = draft.text.split("\n")
        if any(MARKER.fullmatch(line) for line in text_lines):
            # a skeleton: non-marker lines are its source lines in order; each marker names a member chunk
            window = source_lines[draft.start_line - 1 : draft.end_line]
            position = 0
            for line in text_lines:
                marker = MARKER.fullmatch(line)
                if marker:
                    assert (int(marker.group(2)), int(marker.group(3))) in spans
                    continue
                position = window.index(line, position) + 1
            assert text_lines[0] == window[0]
        else:
            assert text_lines == source_lines[draft.start_line - 1 : draft.end_line], draft.symbol_name


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_every_meaningful_line_is_in_some_chunk(language: str) -> None:
    covered: set[int] = set()
    for draft in _chunk(language):
        covered.update(range(draft.start_line, draft.end_line + 1))
    structural = re.compile(r"\s*([{}();]+\s*(//.*)?)?|#endif")
    missing = [
        (number, line)
        for number, line in enumerate(EXPECTED[language][0].split("\n"), start=1)
        if number not in covered and not structural.fullmatch(line)
    ]
    assert missing == []


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_ordinals_count_per_kind_and_symbol(language: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for draft in _chunk(language):
        key = (draft.chunk_kind, draft.symbol_name)
        assert draft.ordinal == seen.get(key, 0)
        seen[key] = draft.ordinal + 1


def test_summaries_carry_signature_and_first_doc_line() -> None:
    by_symbol = {d.symbol_name: d.summary for d in _chunk("python") if d.symbol_name}
    assert by_symbol["Client"] == "class Client:\nHTTP client."
    assert by_symbol["Client.send"] == "def send(self, path: str) -> Any:\nSend a request."
    assert by_symbol["Client.close"] == "def close(self) -> None:\nClose the pool."

    java = {d.symbol_name: d.summary for d in _chunk("java") if d.symbol_name}
    assert java["Client"] == "public class Client\nA simple client."
    assert java["Client.send"] == "public String send(String path)\nSend a request."

    go = {d.symbol_name: d.summary for d in _chunk("go") if d.symbol_name}
    assert go["Client.Send"] == "func (c *Client) Send(path string) error\nSend posts a request."

    csharp = {d.symbol_name: d.summary for d in _chunk("csharp") if d.symbol_name}
    assert csharp["Client.Send"] == "public string Send(string path)\nSend a request."

    rust = {(d.chunk_kind, d.symbol_name, d.ordinal): d.summary for d in _chunk("rust")}
    assert rust[("struct", "Store", 0)] == "pub struct Store\nA key-value store."
    assert rust[("impl", "Store", 0)] == "impl Store"
    assert rust[("impl", "Store", 1)] == "impl fmt::Display for Store"


def test_decorators_annotations_and_attributes_stay_with_their_definition() -> None:
    python = {d.symbol_name: d.text for d in _chunk("python")}
    assert python["Client"].startswith("@dataclass\nclass Client:")
    kotlin = {d.symbol_name: d.text for d in _chunk("kotlin")}
    assert kotlin["Client.close"].startswith('    @Deprecated("old")\n    fun close()')
    rust = {d.symbol_name: d.text for d in _chunk("rust") if d.chunk_kind == "struct"}
    assert rust["Store"].startswith("/// A key-value store.\n#[derive(Debug, Clone)]\npub struct Store")
    csharp = {d.symbol_name: d.text for d in _chunk("csharp")}
    assert csharp["Client"].startswith("    /// <summary>A simple client.</summary>\n    [Serializable]")


IDIOMS = {
    "cpp": (
        "namespace a {\nvoid ns::Foo::bar() {\n  run();\n}\nbool Foo::operator<(const Foo& o) const {\n"
        "  return x < o.x;\n}\ntemplate <typename T>\nclass Box {\n  T get() const {\n    return v;\n  }\n"
        "  T v;\n};\n}\n",
        [
            ("module", "", "", 1, 1),
            ("method", "ns.Foo.bar", "Foo", 2, 4),
            ("method", "Foo.operator<", "Foo", 5, 7),
            ("class", "Box", "Box", 8, 14),
            ("method", "Box.get", "Box", 10, 12),
        ],
    ),
    "javascript": (
        "function Foo() {\n  this.x = 1;\n}\nFoo.prototype.bar = function () {\n  return this.x;\n};\n",
        [("function", "Foo", "", 1, 3), ("method", "Foo.bar", "Foo", 4, 6)],
    ),
    "kotlin": (
        'enum class Color {\n    RED, GREEN;\n    fun hex(): String {\n        return "#"\n    }\n}\n'
        "object Registry {\n    fun register(x: Int) {\n        println(x)\n    }\n}\n",
        [
            ("enum", "Color", "Color", 1, 6),
            ("method", "Color.hex", "Color", 3, 5),
            ("object", "Registry", "Registry", 7, 11),
            ("method", "Registry.register", "Registry", 8, 10),
        ],
    ),
    "ruby": (
        "class Config\n  class << self\n    def load(path)\n      new(path)\n    end\n  end\nend\n",
        [("class", "Config", "Config", 1, 7), ("method", "Config.load", "Config", 3, 5)],
    ),
    "java": (
        "enum Op {\n  ADD, SUB;\n  int apply(int a) {\n    return a;\n  }\n}\n",
        [("enum", "Op", "Op", 1, 6), ("method", "Op.apply", "Op", 3, 5)],
    ),
    "csharp": (
        "namespace App;\n\npublic record Person(string Name);\n\npublic class Greeter\n{\n"
        "    public string Greet(Person p)\n    {\n        return p.Name;\n    }\n}\n",
        [
            ("module", "", "", 1, 1),
            ("class", "Person", "Person", 3, 3),
            ("class", "Greeter", "Greeter", 5, 11),
            ("method", "Greeter.Greet", "Greeter", 7, 10),
        ],
    ),
    "php": (
        "<?php\ntrait Greets {\n    public function hello()\n    {\n        return 'hi';\n    }\n}\n",
        [
            ("module", "", "", 1, 1),
            ("trait", "Greets", "Greets", 2, 7),
            ("method", "Greets.hello", "Greets", 3, 6),
        ],
    ),
    "typescript": (
        "namespace Util {\n  export function pad(s: string): string {\n    return s;\n  }\n}\n"
        "export abstract class Shape {\n  abstract area(): number;\n  describe(): string {\n    return 'shape';\n  }\n}\n",
        [
            ("module", "", "", 1, 1),
            ("function", "pad", "", 2, 4),
            ("class", "Shape", "Shape", 6, 11),
            ("method", "Shape.describe", "Shape", 8, 10),
        ],
    ),
    "rust": (
        "impl<T: Clone> Wrapper<T> {\n    fn inner(&self) -> T {\n        self.0.clone()\n    }\n}\n"
        "macro_rules! square {\n    ($x:expr) => { $x * $x };\n}\n",
        [
            ("impl", "Wrapper", "Wrapper", 1, 5),
            ("method", "Wrapper.inner", "Wrapper", 2, 4),
            ("macro", "square", "", 6, 8),
        ],
    ),
    "go": (
        "package p\n\ntype (\n\tA int\n\tB string\n)\n\ntype Reader interface {\n\tRead(p []byte) (int, error)\n}\n",
        [("module", "", "", 1, 6), ("interface", "Reader", "Reader", 8, 10)],
    ),
    "swift": (
        "actor Worker {\n    func run() async {\n        work()\n    }\n}\n"
        "extension Outer.Inner {\n    static func == (a: Inner, b: Inner) -> Bool {\n        true\n    }\n}\n",
        [
            ("class", "Worker", "Worker", 1, 5),
            ("method", "Worker.run", "Worker", 2, 4),
            ("impl", "Outer.Inner", "Inner", 6, 10),
            ("method", "Outer.Inner.==", "Inner", 7, 9),
        ],
    ),
    "c": (
        "typedef struct node {\n    int value;\n    struct node *next;\n} node_t;\n\nenum color { RED, GREEN };\n\nstruct point;\n",
        [("struct", "node", "node", 1, 4), ("enum", "color", "color", 6, 6), ("module", "", "", 8, 8)],
    ),
}


@pytest.mark.parametrize("language", sorted(IDIOMS))
def test_language_idioms(language: str) -> None:
    """Out-of-line C++ members, JS prototypes, Kotlin enums/objects, Ruby ``class << self``, namespaces..."""
    source, expected = IDIOMS[language]
    drafts = chunk_file("idiom", source.encode(), language)
    assert [(d.chunk_kind, d.symbol_name, d.class_name, d.start_line, d.end_line) for d in drafts] == expected


def test_every_code_language_has_a_spec_and_a_fixture() -> None:
    from local_memory_indexer.chunking.languages import syntax_of
    from local_memory_indexer.treesitter import CODE_LANGUAGES, get_language

    assert set(CODE_LANGUAGES) == set(EXPECTED)
    for language in CODE_LANGUAGES:
        assert syntax_of(language).definitions or syntax_of(language).call_definitions
        assert get_language(language) is not None  # the bundled grammar loads


def test_benchmark_languages_are_chunked_by_definition_from_their_file_names() -> None:
    """Scala, Elixir, Haskell, Lua, Bash, Zig and Swift files chunk along definitions, found by extension alone."""
    from local_memory_indexer.treesitter import language_for_path

    expected = {
        "lib/client.scala": ("scala", "Client.send"),
        "lib/app/client.ex": ("elixir", "App.Client.send"),
        "src/Client.hs": ("haskell", "send"),
        "lua/client.lua": ("lua", "Client.send"),
        "bin/build.sh": ("bash", "build"),
        "src/clap.zig": ("zig", "Client.send"),
        "Source/Core/Session.swift": ("swift", "Client.close"),
    }
    for path, (language, symbol) in expected.items():
        assert language_for_path(path) == language
        drafts = chunk_file(path, EXPECTED[language][0].encode(), language_for_path(path))
        assert symbol in {d.symbol_name for d in drafts}
        assert "window" not in {d.chunk_kind for d in drafts}


def test_lua_statements_parse_without_errors_and_without_hanging() -> None:
    """tree-sitter-languages 1.10.2's Lua grammar read ``local M = {}`` and ``x = 1`` as ERRORs (most
    of a Lua file became windows) and looped for good on a file holding ``f(a)``: tree-sitter-lua
    0.2.0 parses all of them (a loop would now end at the parse limit, as windows: this test fails
    either way)."""
    from local_memory_indexer import treesitter

    for source in (b"local M = {}\nM.x = 1\nreturn M\n", b"f(a)\n", b"x = 1.5\n", b"x = 1 "):
        treesitter.forget_last_tree()
        assert not treesitter.parse("lua", source).root_node.has_error, source
    source = b"local M = {}\n\nfunction M.setup(opts)\n  M.opts = opts\nend\n\nM.setup({ a = 1 })\n"
    chunks = chunk_file("lua/plugin/init.lua", source, "lua")
    assert [(c.chunk_kind, c.symbol_name, c.start_line, c.end_line) for c in chunks] == [
        ("module", "", 1, 1),
        ("method", "M.setup", 3, 5),
        ("module", "", 7, 7),
    ]


def test_a_lua_function_assigned_to_a_name_is_a_definition() -> None:
    """``M.f = function() end`` (telescope's actions, most plugin code) and ``local f = function()
    end`` are definitions, as ``function M.f()`` is; several names, or a value that is no
    function, define nothing."""
    source = (
        b"local M = {}\n"
        b"\n"
        b"M.select = function(prompt)\n"
        b"  return prompt.value\n"
        b"end\n"
        b"\n"
        b"local close = function(win)\n"
        b"  vim.api.nvim_win_close(win, true)\n"
        b"end\n"
        b"\n"
        b"a, b = function() end, 2\n"
        b"M.limit = 10\n"
        b"\n"
        b"return M\n"
    )
    chunks = chunk_file("lua/picker/actions.lua", source, "lua")
    assert [(c.chunk_kind, c.symbol_name, c.start_line, c.end_line) for c in chunks] == [
        ("module", "", 1, 1),
        ("method", "M.select", 3, 5),
        ("function", "close", 7, 9),
        ("module", "", 11, 14),
    ]
