import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { svelteTesting } from "@testing-library/svelte/vite";

// The window loads ui/dist (tauri.conf.json `frontendDist`); `npm run dev` serves on 5173.
export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: "safari15", outDir: "dist", emptyOutDir: true },
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
  },
});
