package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rootfs"
	"github.com/zeroagent/zero/vision"
)

// DefaultMaxImages is how many images one vision_load call loads: Agent
// Zero's max_embeds.
const DefaultMaxImages = 10

// visionMaxPathBytes bounds one path: a path, not a picture given as text.
const visionMaxPathBytes = 4096

// visionMaxListed bounds the skipped paths a result lists.
const visionMaxListed = 50

// VisionLoadOptions configure [NewVisionLoad]. The zero value reads
// images in the calling session's workspace.
type VisionLoadOptions struct {
	// Roots are the folders whose images are read, through the root that
	// holds them (a symlink leading out is refused); a relative path
	// resolves against the first. None means the session's workspace.
	Roots []string
	// MaxImages is the most images one call loads: the last ones named,
	// the others are reported skipped. 0 means DefaultMaxImages.
	MaxImages int
	// ReadOutside reads a path outside every root, of at most limit bytes:
	// the sandbox's own files. nil: such a path is refused.
	ReadOutside func(ctx context.Context, path string, limit int64) ([]byte, error)
}

// VisionLoad is Agent Zero's `vision_load` tool: it loads pictures from
// the workspace (or, through ReadOutside, the sandbox) into the model's
// next request, each checked and scaled down by package vision.
type VisionLoad struct {
	opts VisionLoadOptions
}

var (
	_ loop.Tool       = (*VisionLoad)(nil)
	_ loop.ToolKinder = (*VisionLoad)(nil)
	_ loop.Specified  = (*VisionLoad)(nil)
)

// NewVisionLoad returns the vision_load tool.
func NewVisionLoad(o VisionLoadOptions) *VisionLoad {
	var roots []string
	for _, r := range o.Roots {
		if r == "" {
			continue
		}
		if abs, err := filepath.Abs(r); err == nil {
			r = abs
		}
		roots = append(roots, filepath.Clean(r))
	}
	o.Roots = roots
	if o.MaxImages <= 0 {
		o.MaxImages = DefaultMaxImages
	}
	return &VisionLoad{opts: o}
}

// Name is Agent Zero's tool name.
func (*VisionLoad) Name() string { return "vision_load" }

// Kind is "read": the tool reads files.
func (*VisionLoad) Kind(string) string { return "read" }

// visionArgs are vision_load's arguments.
type visionArgs struct {
	Paths stringOrList `json:"paths" jsonschema:"the images to load: absolute paths, or paths relative to the workspace; a list, or one path"`
}

var visionSpecs = specOf[visionArgs](nil)

// Specs: one function, its argument paths.
func (*VisionLoad) Specs() []loop.ToolSpec { return visionSpecs() }

// Execute loads the images named by tool_args.paths: the result lists
// those loaded, those skipped and why each failed one failed, and brings
// the loaded ones as its Images.
func (v *VisionLoad) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	paths, ok := stringList(call.Args["paths"], visionMaxPaths)
	if !ok {
		return failed("vision_load: tool_args.paths must be a list of image paths (strings)")
	}
	if len(paths) == 0 {
		return failed("vision_load needs tool_args.paths: the list of image paths to load")
	}
	var skipped []string
	if n := v.opts.MaxImages; len(paths) > n {
		skipped, paths = paths[:len(paths)-n], paths[len(paths)-n:]
	}
	roots := v.roots(call)
	var (
		loaded   []string
		images   []llm.Image
		failures []string
	)
	for _, p := range paths {
		img, err := v.load(ctx, roots, p)
		if ctx.Err() != nil {
			return loop.ToolResult{IsError: true, Text: "[vision_load stopped: " + context.Cause(ctx).Error() + "]"}, nil
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("Error processing image %s: %v", p, err))
			continue
		}
		loaded = append(loaded, p)
		if !slices.ContainsFunc(images, func(i llm.Image) bool { return i.Hash == img.Hash }) {
			images = append(images, img)
		}
	}

	// Agent Zero's result, with why each failure failed.
	var b strings.Builder
	b.WriteString("Loaded images:\n")
	writeList(&b, loaded)
	fmt.Fprintf(&b, "\n\nSkipped images (max %d loaded at a time according to model configuration):\n", v.opts.MaxImages)
	if len(skipped) > visionMaxListed {
		more := len(skipped) - visionMaxListed
		skipped = append(slices.Clone(skipped[:visionMaxListed]), fmt.Sprintf("... and %d more", more))
	}
	writeList(&b, skipped)
	if len(failures) > 0 {
		b.WriteString("\n\n")
		b.WriteString(strings.Join(failures, "\n"))
	}
	return loop.ToolResult{Text: b.String(), Images: images, IsError: len(images) == 0}, nil
}

// visionMaxPaths bounds the paths one call reads (a hostile model may send
// endless ones): the last MaxImages of them load, the rest are skipped.
const visionMaxPaths = 1000

func writeList(b *strings.Builder, items []string) {
	if len(items) == 0 {
		b.WriteString("none")
		return
	}
	b.WriteString(strings.Join(items, "\n"))
}

// roots are the folders images may come from.
func (v *VisionLoad) roots(call *loop.ToolCall) []string { return toolRoots(v.opts.Roots, call) }

// load reads and prepares the image at arg.
func (v *VisionLoad) load(ctx context.Context, roots []string, arg string) (llm.Image, error) {
	if len(arg) > visionMaxPathBytes {
		return llm.Image{}, fmt.Errorf("a path is at most %d bytes", visionMaxPathBytes)
	}
	data, err := v.read(ctx, roots, arg)
	if err != nil {
		return llm.Image{}, err
	}
	return vision.LoadContext(ctx, data, arg)
}

// read reads the file at arg: through the root that holds it, or with
// ReadOutside outside every root.
func (v *VisionLoad) read(ctx context.Context, roots []string, arg string) ([]byte, error) {
	where := strings.Join(roots, ", ")
	refuse := func(why string) error {
		return fmt.Errorf("path %q %s: vision_load reads images only inside %s; copy the image into the workspace first", arg, why, where)
	}
	p := arg
	if s, ok := strings.CutPrefix(p, "file://"); ok {
		p = s
	}
	if strings.HasPrefix(p, "~") {
		return nil, errors.New("the path starts with ~, which is not expanded: give the absolute path")
	}
	if !filepath.IsAbs(p) {
		if len(roots) == 0 {
			return nil, errors.New("there is no workspace for a relative path: give the absolute path")
		}
		p = filepath.Join(roots[0], p)
	}
	p = filepath.Clean(p)
	if !slices.ContainsFunc(roots, func(r string) bool { return rootfs.Within(r, p) }) {
		if v.opts.ReadOutside != nil {
			data, err := v.opts.ReadOutside(ctx, p, vision.MaxSourceBytes)
			if err == nil && len(data) > vision.MaxSourceBytes {
				return nil, fmt.Errorf("%w: the file is more than %d MiB", vision.ErrTooLarge, vision.MaxSourceBytes>>20)
			}
			return data, err
		}
		if len(roots) == 0 {
			return nil, errors.New("there is no workspace to read images from")
		}
		return nil, refuse("is outside the workspace")
	}
	base, rel, why, err := inRoot(roots, p)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, refuse(why)
	}
	// rootfs.ReadFile opens without blocking: a named pipe is refused, not
	// waited on.
	data, err := rootfs.ReadFile(base, "", filepath.ToSlash(rel), vision.MaxSourceBytes)
	switch {
	case err == nil:
		return data, nil
	case rootfs.IsEscape(err):
		return nil, refuse("leads outside the workspace through a symlink")
	case errors.Is(err, rootfs.ErrTooLarge):
		return nil, fmt.Errorf("%w: the file is more than %d MiB", vision.ErrTooLarge, vision.MaxSourceBytes>>20)
	}
	if fi, serr := os.Stat(filepath.Join(base, rel)); serr == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file but %s", rootfs.NotRegular(fi.Mode()))
	}
	return nil, errors.New(rootfs.Reason(err))
}
