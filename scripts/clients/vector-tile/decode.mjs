// Decodes a Mapbox vector tile read from stdin with @mapbox/vector-tile
// and prints, as JSON, every layer's name, extent and features: their
// type, properties and geometry in tile coordinates, and their GeoJSON
// (WGS 84) for the tile z/x/y given as arguments.
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';

const [z, x, y] = process.argv.slice(2).map(Number);
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const tile = new VectorTile(new PbfReader(Buffer.concat(chunks)));
const out = {};
for (const name of Object.keys(tile.layers)) {
  const layer = tile.layers[name];
  const features = [];
  for (let i = 0; i < layer.length; i++) {
    const f = layer.feature(i);
    features.push({ type: f.type, properties: f.properties, geometry: f.loadGeometry(), geojson: f.toGeoJSON(x, y, z).geometry });
  }
  out[name] = { extent: layer.extent, version: layer.version, features };
}
process.stdout.write(JSON.stringify(out));
